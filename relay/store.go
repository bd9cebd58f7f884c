package relay

import (
	"context"
	"errors"
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

func address(evt *snowclaw.Event) string {
	d := ""
	if nostr.IsAddressableKind(evt.Kind) {
		d = evt.D
	}
	return snowclaw.Address(evt.Kind, evt.PubKey, d)
}

// errAlreadyStored is the outcome of an event the relay already holds:
// no failure (NIP-01), so the client gets OK true with this message,
// and nobody else hears of it again.
var errAlreadyStored = errors.New("duplicate: already have this event")

// versionCheck decides a replaceable or addressable event against the
// stored versions of its address: nil when evt is the newest,
// errAlreadyStored when evt itself is stored, and a duplicate: refusal
// when a version at least as new is (NIP-01: newest created_at wins, ties
// go to the lowest id). It reads every stored version, exactly that
// address's: a version cut off by a limit, or one of a longer d tag taken
// for it, would let an older version in.
func versionCheck(ctx context.Context, st eventstore.Store, evt *snowclaw.Event) error {
	prev, err := store.Versions(ctx, st, evt.Event)
	if err != nil {
		return snowclaw.StoreFailed(err, "looking up the stored versions of %s", address(evt))
	}
	for _, p := range prev {
		if p.ID == evt.ID {
			return errAlreadyStored
		}
	}
	if store.NewerIn(prev, evt.Event) {
		return snowclaw.Duplicate("a version of %s at least as new is already stored; send a newer created_at to replace it", address(evt))
	}
	return nil
}
