package main

import (
	"context"
	"errors"
	"testing"

	"github.com/snowclaw/snowclaw/internal/eval/benchcorpus"
)

// SIGTERM ends snowbench's context (main); signing a large corpus then
// stops instead of running to its end.
func TestCorpusEvents_StopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	evs, err := corpusEvents(ctx, benchcorpus.Generate(corpusSeed, 5000))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("signing under a cancelled context: %d events, err %v; want context.Canceled", len(evs), err)
	}
}
