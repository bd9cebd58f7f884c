package relay

import (
	"encoding/json"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkEventFrame is the cost of one EVENT frame of a search result
// (a memory of about the bench corpus's size), written by eventFrame and
// by json.Marshal of go-nostr's envelope, which the relay used before
// and which parses and compacts what the envelope encoded.
//
//	go test ./relay/ -run '^$' -bench EventFrame -benchmem
func BenchmarkEventFrame(b *testing.B) {
	evt := &nostr.Event{
		ID: "5c83da77af1dec6d7289834998ad7aafbd9e2191396d75ec3cc27f5a77226f36", PubKey: "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
		CreatedAt: 1717171717, Kind: 30078,
		Tags:    nostr.Tags{{"d", "snow:memory:project/atlas/ingest/decision-2n9c"}, {"t", "decision"}},
		Content: `{"summary":"Meeting with Dana and Priya about the ingest queue on Postgres: agreed to shard the consumer on tenant id by Friday."}`,
		Sig:     "9b4a7f0c1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677889900aabb",
	}
	sub := "q123"
	b.Run("frame=eventFrame", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := eventFrame(sub, evt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("frame=json.Marshal", func(b *testing.B) { // what it replaced
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(nostr.EventEnvelope{SubscriptionID: &sub, Event: *evt}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
