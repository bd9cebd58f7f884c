package node_test

import (
	"fmt"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// While other authenticated connections publish as fast as their OKs
// come back, every event of one more publisher is found by a NIP-50
// search within a second of its OK (docs/design.md "Search"): kind 1 notes (keyword
// only) and memory items (embedded) alike. The index is updated off the
// write path in batches; the prober polls with a deadline, so the test
// holds however the work is scheduled, and fails if an event is missing
// a second after its OK.
func TestSearch_FoundWithinASecondOfOKUnderLoad(t *testing.T) {
	e := startEnv(t, withSearch)
	const loaders, perLoader, probes = 4, 60, 20
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, loaders)
	for l := range loaders {
		u := newUser()
		c := e.connect(&u)
		wg.Go(func() {
			for i := 0; i < perLoader; i++ {
				select {
				case <-stop:
					return
				default:
				}
				evt := mkEvent(u, 1, nil, fmt.Sprintf("background chatter from loader %d about harbour logistics number %d", l, i))
				if i%2 == 1 {
					evt = memory(u, fmt.Sprintf("load/%d/%d", l, i), fmt.Sprintf(`{"summary":"loader %d remembers crate %d went to pier seven"}`, l, i))
				}
				if err := publish(c, evt); err != nil {
					errs <- fmt.Errorf("loader %d, event %d: %w", l, i, err)
					return
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()

	u := newUser()
	pub, reader := e.connect(&u), e.connect(nil)
	for i := range probes {
		word := fmt.Sprintf("zanzibarprobe%dx", i)
		evt := mkEvent(u, 1, nil, "a probe note carrying the word "+word+" among ordinary text")
		if i%2 == 1 {
			evt = memory(u, fmt.Sprintf("probe/%d", i), fmt.Sprintf(`{"summary":"probe memory with %s inside"}`, word))
		}
		e.mustPublish(pub, evt)
		// the bound is the behaviour under test: searchable within a
		// second of the OK, while loaders keep the indexer busy
		deadline := time.Now().Add(time.Second)
		for {
			got, closed, err := reader.Fetch(nostr.Filter{Search: word, Limit: 5}, testwait.Scaled(5*time.Second))
			if err != nil || closed != "" {
				t.Fatalf("probe %d: search failed: %v %s", i, err, closed)
			}
			if contains(got, evt.ID) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("probe %d (kind %d) not found by search a second after its OK", i, evt.Kind)
			}
		}
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}
