package relay

import (
	"context"
	"hash/fnv"
	"sync"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// writeGuard serializes writes to one replaceable address, so that the
// "is there a newer version?" check and the replacement are one step.
type writeGuard struct {
	stripes [64]sync.Mutex
}

func (w *writeGuard) lock(addr string) func() {
	h := fnv.New32a()
	h.Write([]byte(addr))
	m := &w.stripes[h.Sum32()%uint32(len(w.stripes))]
	m.Lock()
	return m.Unlock
}

func address(evt *nostr.Event) string {
	d := ""
	if nostr.IsAddressableKind(evt.Kind) {
		d = evt.Tags.GetD()
	}
	return snowclaw.Address(evt.Kind, evt.PubKey, d)
}

// newerStored reports whether the store holds evt or a version of its
// address that is not older than evt (NIP-01: newest created_at wins,
// ties go to the lowest id). It reads every stored version, exactly that
// address's: a version cut off by a limit, or one of a longer d tag taken
// for it, would let an older version in.
func newerStored(ctx context.Context, st eventstore.Store, evt *nostr.Event) (bool, error) {
	prev, err := store.Versions(ctx, st, evt)
	if err != nil {
		return false, err
	}
	return store.NewerIn(prev, evt), nil
}
