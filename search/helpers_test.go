package search

import (
	"context"
	"testing"
)

func openTest(t *testing.T, o Options) *Index {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	ix, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func mustIndex(t testing.TB, ix *Index, docs ...Doc) {
	t.Helper()
	if err := ix.Index(context.Background(), docs...); err != nil {
		t.Fatalf("Index: %v", err)
	}
}

func search(t testing.TB, ix *Index, q Query) []Result {
	t.Helper()
	res, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Text, err)
	}
	return res
}

func ids(res []Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Doc.ID
	}
	return out
}

func indexOf(res []Result, id string) int {
	for i, r := range res {
		if r.Doc.ID == id {
			return i
		}
	}
	return -1
}

// memDocs is a small corpus of memory items.
func memDocs() []Doc {
	return []Doc{
		{ID: "a", Kind: 30078, Text: "The relay uses badger as its default event store", Topic: "project/snowclaw/storage", CreatedAt: 100},
		{ID: "b", Kind: 30078, Text: "NIP-42 AUTH must be answered before reading group events", Topic: "lesson/nip42", CreatedAt: 200},
		{ID: "c", Kind: 30078, Text: "Alice prefers short answers in German", Topic: "user/alice/preferences", CreatedAt: 300},
		{ID: "d", Kind: 30078, Text: "Group chat messages shorter than twenty characters are not indexed", Topic: "project/snowclaw/search", CreatedAt: 400},
		{ID: "e", Kind: 30078, Text: "Bob is learning Rust and asks about error handling", Topic: "user/bob/notes", CreatedAt: 500},
	}
}
