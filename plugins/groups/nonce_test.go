package groups

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// The search for a lower id runs while a client waits for its OK: a
// small event may try up to maxNonce nonces, a member list of thousands
// only as many as maxNonceBytes hashes, and one that finds none gives up
// (its version waits for the next second).
func TestLowerID_BoundedByBytes(t *testing.T) {
	small := &nostr.Event{Kind: 39002, CreatedAt: 1, Tags: nostr.Tags{{"d", "g"}}}
	if got := nonceTries(len(small.Serialize())); got != maxNonce {
		t.Fatalf("a small list may try %d nonces, want %d", got, maxNonce)
	}
	big := &nostr.Event{Kind: 39002, CreatedAt: 1, Tags: nostr.Tags{{"d", "g"}}}
	for i := range 5000 {
		big.Tags = append(big.Tags, nostr.Tag{"p", fmt.Sprintf("%064x", i)})
	}
	size := len(big.Serialize())
	tries := nonceTries(size)
	if tries*size > maxNonceBytes || tries < 1 {
		t.Fatalf("a %d-byte list may try %d nonces: %d bytes hashed, over %d", size, tries, tries*size, maxNonceBytes)
	}
	// no id is below all zeros: the search gives up, and leaves the tags
	// as they were
	n := len(big.Tags)
	if lowerID(big, strings.Repeat("f", 64), strings.Repeat("0", 64)) {
		t.Fatal("found an id below all zeros")
	}
	if len(big.Tags) != n {
		t.Fatalf("a failed search left %d tags, had %d", len(big.Tags), n)
	}
}
