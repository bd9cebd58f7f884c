package httpapi

import (
	"errors"
	"testing"
	"time"
)

// TestReplayCache: an id is taken once until it expires; a full cache
// refuses new ids rather than forgetting old ones.
func TestReplayCache(t *testing.T) {
	var c replayCache
	now := time.Now()
	if err := c.use("a", now, now); err != nil {
		t.Fatal(err)
	}
	if err := c.use("a", now, now.Add(30*time.Second)); !errors.Is(err, errReplayed) {
		t.Fatalf("replay within the window: %v", err)
	}
	later := now.Add(nip98Window + 2*time.Second)
	if err := c.use("a", now, later); err != nil {
		t.Fatalf("after expiry (the time check refuses it anyway): %v", err)
	}
	var full replayCache
	for i := range maxReplayIDs {
		if err := full.use(string(rune(i))+"/"+time.Duration(i).String(), now, now); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if err := full.use("one more", now, now); !errors.Is(err, errReplaysFull) {
		t.Fatalf("full cache: %v", err)
	}
	if err := full.use("one more", now, later); err != nil {
		t.Fatalf("after the window the cache empties: %v", err)
	}
}
