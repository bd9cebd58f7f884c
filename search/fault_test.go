package search

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// panicEmbedder panics on texts holding "boom", as a misbehaving
// dependency would.
type panicEmbedder struct{ Embedder }

func (p panicEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, "boom") {
			panic("embedder exploded")
		}
	}
	return p.Embedder.Embed(ctx, texts)
}

// A panic inside the engine is an error that asks for a rebuild, never a
// crash; the index keeps working for everything else.
func TestFault_PanicsBecomeErrors(t *testing.T) {
	ix := openTest(t, Options{Embedder: panicEmbedder{NewBuiltinEmbedder()}})
	mustIndex(t, ix, memDocs()...)
	var pe *PanicError
	err := ix.Index(context.Background(), Doc{ID: "x", Text: "boom goes the doc"})
	if !errors.As(err, &pe) || !errors.Is(err, ErrNeedsRebuild) || pe.Op != "prepare" {
		t.Fatalf("Index with a panicking embedder: %v", err)
	}
	if _, err := ix.Search(context.Background(), Query{Text: "boom badger"}); !errors.As(err, &pe) || pe.Op != "search" {
		t.Fatalf("Search with a panicking embedder: %v", err)
	}
	SetFaultHook(func(op, text string) { panic("injected") })
	_, err = ix.Search(context.Background(), Query{Text: "badger"})
	SetFaultHook(nil)
	if !errors.Is(err, ErrNeedsRebuild) {
		t.Fatalf("Search with an injected panic: %v", err)
	}
	if res := search(t, ix, Query{Text: "badger"}); len(res) == 0 || res[0].Doc.ID != "a" {
		t.Fatalf("after the panics: %v", ids(res))
	}
	if ix.IsBroken() {
		t.Fatal("a panic before any change marked the index broken")
	}

	// half-way through a write: broken until rebuilt
	SetFaultHook(func(op, text string) {
		if op == "index" && strings.Contains(text, "halfway") {
			panic("injected")
		}
	})
	err = ix.Index(context.Background(), Doc{ID: "y1", Text: "first of the batch"}, Doc{ID: "y2", Text: "halfway"})
	SetFaultHook(nil)
	if !errors.As(err, &pe) || pe.Op != "index" || !ix.IsBroken() {
		t.Fatalf("panic in a write: %v (broken %v)", err, ix.IsBroken())
	}
	if _, err := ix.Search(context.Background(), Query{Text: "badger"}); !errors.Is(err, ErrBroken) {
		t.Fatalf("search on a broken index: %v", err)
	}
	err = ix.Rebuild(context.Background(), func(yield func(Doc) error) error {
		for _, d := range append(memDocs(), Doc{ID: "y2", Text: "halfway"}) {
			if err := yield(d); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil || ix.IsBroken() {
		t.Fatalf("rebuild: %v (broken %v)", err, ix.IsBroken())
	}
	if res := search(t, ix, Query{Text: "halfway"}); len(res) == 0 || res[0].Doc.ID != "y2" {
		t.Fatalf("after the rebuild: %v", ids(res))
	}
}
