package relay

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/nostrsig"
)

// FuzzCheckAuth: any AUTH event, however its tags are shaped, is answered
// with a reason or a pubkey, never a panic (go-nostr's validator panicked
// on a missing relay tag); an accepted one carries exactly our challenge
// and names us.
func FuzzCheckAuth(f *testing.F) {
	f.Add(`[["relay","ws://127.0.0.1:3334"],["challenge","c"]]`, int64(0))
	f.Add(`[["challenge","c"]]`, int64(0))
	f.Add(`[["relay"],["challenge","c"],[]]`, int64(-3600))
	f.Add(`[["relay","ws://localhost:3334/"],["challenge","c"],["challenge","c"]]`, int64(5))
	sk := nostr.GeneratePrivateKey()
	c := &client{r: &Relay{sigs: nostrsig.New(8)}, challenge: "c", self: selfOrigin{host: "127.0.0.1:3334", local: "127.0.0.1:3334"}}
	f.Fuzz(func(t *testing.T, tags string, skew int64) {
		var tt nostr.Tags
		if json.Unmarshal([]byte(tags), &tt) != nil {
			return
		}
		now := time.Now()
		evt := nostr.Event{Kind: 22242, Tags: tt, CreatedAt: nostr.Timestamp(now.Unix() + skew)}
		if evt.Sign(sk) != nil {
			return
		}
		pk, err := c.checkAuth(&evt, now)
		if err != nil {
			return
		}
		if pk != evt.PubKey {
			t.Fatalf("accepted as %s, signed by %s", pk, evt.PubKey)
		}
		n := 0
		for _, tag := range evt.Tags {
			if len(tag) > 0 && tag[0] == "challenge" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("accepted with %d challenge tags: %s", n, tags)
		}
	})
}
