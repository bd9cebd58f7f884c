package relay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/storeq"
)

// openBadger opens the default store. maxLimit only needs to cover the
// largest page anyone asks for (clients are clamped by the read path,
// internal jobs page by storeq.PageSize); badger preallocates a quarter of
// it for every query without a limit (khatru's own lookups), so it is kept
// small.
func openBadger(path string, maxLimit int) (b *badgerstore.BadgerBackend, err error) {
	modify := func(o badger.Options) badger.Options { return o.WithLogger(nil) }
	// damaged files are found before badger opens them (store_check.go);
	// a panic that still happens on this goroutine becomes an error too
	if err := checkTables(modify(badger.DefaultOptions(path))); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, &StoreDamagedError{Dir: path, File: path, Err: fmt.Errorf("opening it panics: %v", firstLine(fmt.Sprint(p)))}
		}
	}()
	b = &badgerstore.BadgerBackend{
		Path:                  path,
		MaxLimit:              max(maxLimit, storeq.PageSize),
		BadgerOptionsModifier: modify,
	}
	if err := b.Init(); err != nil {
		if isDirectoryLocked(err) {
			return nil, fmt.Errorf("%w: %s is locked by another process; stop the running relay first", ErrStoreInUse, path)
		}
		return nil, fmt.Errorf("opening event store at %s: %w", path, err)
	}
	return b, nil
}

// ErrStoreInUse is returned by New when another process (a running relay)
// holds the event store.
var ErrStoreInUse = errors.New("event store in use")

// isDirectoryLocked recognizes badger's refusal to share its directory.
// badger formats the flock error into its message (y.Wrapf, %+v) instead
// of wrapping it, so its text is the only signal; this is the one place
// that reads it, and everyone above gets ErrStoreInUse.
func isDirectoryLocked(err error) bool {
	return strings.Contains(err.Error(), "Cannot acquire directory lock")
}

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
func newerStored(ctx context.Context, store eventstore.Store, evt *nostr.Event) (bool, error) {
	prev, err := storeq.Versions(ctx, store, evt)
	if err != nil {
		return false, err
	}
	return storeq.NewerIn(prev, evt), nil
}
