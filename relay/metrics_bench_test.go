package relay

import (
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// The cost of the counters on the write and read paths, run before and
// after a change of metrics library: go test -bench Metrics -run ^$ ./relay/
func BenchmarkMetrics(b *testing.B) {
	m := newMetrics("bench")
	evt := snowclaw.ReadEvent(&nostr.Event{Kind: 1})
	refusal := snowclaw.Restricted("no")
	b.Run("stored", func(b *testing.B) {
		for b.Loop() {
			m.wrote(evt, false, nil)
		}
	})
	b.Run("rejected", func(b *testing.B) {
		for b.Loop() {
			m.wrote(evt, false, refusal)
		}
	})
	b.Run("query", func(b *testing.B) {
		for b.Loop() {
			m.query(queryREQ)
		}
	})
	b.Run("search-observe", func(b *testing.B) {
		for b.Loop() {
			m.search.observe(3 * time.Millisecond)
		}
	})
	b.Run("stored-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.wrote(evt, false, nil)
			}
		})
	})
}
