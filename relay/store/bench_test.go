package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
)

// BenchmarkSave stores notes one by one, each its own write (a
// transaction and a change-log entry on PostgreSQL).
//
//	go test -run '^$' -bench . ./relay/store/
func BenchmarkSave(b *testing.B) {
	for name, open := range backends() {
		b.Run(name, func(b *testing.B) {
			s := open(b)
			pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
			b.ResetTimer()
			for i := range b.N {
				put(b, s, pk, 1, burst+nostr.Timestamp(i), nostr.Tags{{"t", "bench"}}, fmt.Sprint("note ", i))
			}
		})
	}
}

// BenchmarkQuery reads the newest 50 of 5,000 events matching a tag,
// through store.Exact as the relay does.
func BenchmarkQuery(b *testing.B) {
	for name, open := range backends() {
		b.Run(name, func(b *testing.B) {
			s := open(b)
			pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
			for i := range 5000 {
				put(b, s, pk, 1, burst+nostr.Timestamp(i%600), nostr.Tags{{"t", fmt.Sprint(i % 5)}}, fmt.Sprint("note ", i))
			}
			x := store.NewExact(s)
			f := nostr.Filter{Kinds: []int{1}, Tags: nostr.TagMap{"t": {"3"}}, Limit: 50}
			b.ResetTimer()
			for range b.N {
				ch, err := x.QueryEvents(context.Background(), f)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for range ch {
					n++
				}
				if n != 50 {
					b.Fatalf("%d events, want 50", n)
				}
			}
		})
	}
}
