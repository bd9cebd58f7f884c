package memory

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/snowclaw/snowclaw"
)

// TestStore_Concurrent hammers the store from many goroutines; run with
// -race. Afterwards every record must still be consistent: no item lost
// between a Remember and the flush that took it, none over the cap.
func TestStore_Concurrent(t *testing.T) {
	_, pk := keypair(t)
	s, _ := newTestStore(t, Options{MaxItems: 50})
	ring := NewRing(10)
	const writers, perWriter = 8, 100
	var wg sync.WaitGroup
	var mu sync.Mutex
	flushed := map[string]bool{}
	stop := make(chan struct{})

	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				s.Remember(Item{Text: fmt.Sprintf("fact %d from %d", i%60, w%2), Group: "g", Detail: "d"})
				s.AddNote(pk, fmt.Sprintf("note %d", i%7), w%2 == 0)
				s.SeeMember("g", pk, fmt.Sprintf("name %d", i%3))
				s.Learn(Lesson{Text: fmt.Sprintf("lesson %d", i%5), Source: "owner"})
				ring.Push(HistoryMessage{Content: "m"})
				if i%25 == 0 {
					ring.Resize(5 + i%10)
				}
			}
		}()
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { // the flusher
		defer readers.Done()
		for {
			for _, k := range s.TakeDirty() {
				if rec, ok := s.Record(k); ok && rec.Item != nil {
					rec.Item.Detail += "x" // a private copy: must not race
					mu.Lock()
					flushed[k.ID] = true
					mu.Unlock()
				}
			}
			s.Removed()
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	go func() { // turns reading
		defer readers.Done()
		for {
			for _, it := range s.Items() {
				it.Text += "!"
			}
			s.Recall("fact from", func(it Item) bool { return it.Group == "g" }, 5)
			if n, ok := s.Npub(pk); ok && len(n.Notes) > 0 {
				n.Notes[0] = "mutated"
			}
			s.TopLessons(3, func(Lesson) bool { return true })
			_ = ring.Messages()
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()

	items := s.Items()
	if len(items) > 50+5 {
		t.Errorf("%d items, cap 50 (+10%%)", len(items))
	}
	for _, k := range s.TakeDirty() {
		flushed[k.ID] = true
	}
	for _, it := range items {
		if !flushed[it.ID] {
			t.Errorf("item %s was never handed to the flusher", it.ID)
		}
		if it.Tier != snowclaw.TierGroup || it.Detail != "d" {
			t.Errorf("item changed through a copy: %+v", it)
		}
	}
	n, _ := s.Npub(pk)
	if len(n.Notes)+len(n.OwnerNotes) == 0 || slices.Contains(n.Notes, "mutated") {
		t.Errorf("npub notes = %q, owner notes %q", n.Notes, n.OwnerNotes)
	}
	if ring.Len() > ring.Cap() {
		t.Errorf("ring Len %d > Cap %d", ring.Len(), ring.Cap())
	}
}
