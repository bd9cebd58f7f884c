package store

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dgraph-io/badger/v4"
	badgerstore "github.com/fiatjaf/eventstore/badger"
)

// ErrStoreInUse is returned by OpenBadger when another process (a running
// relay) holds the event store.
var ErrStoreInUse = errors.New("event store in use")

// OpenBadger opens (creating it if needed) the badger event store in dir,
// wrapped so that its answers are exact. maxLimit only needs to cover the
// largest page anyone asks for (clients are clamped by the read path,
// internal jobs page by PageSize); badger preallocates a quarter of it
// for every query without a limit, so it is kept small. cacheMB is the
// cache of decompressed blocks (BadgerOptions). Any command can open the
// store this way without building a relay (snowclaw reindex).
//
// With o.MinFreeMB set (the disk guard on), a volume with less free
// space than BadgerMinFree opens the store read-only: badger's own start
// and background work may write more than is left, and a write to a
// mapped page of a full disk is SIGBUS (badger_space.go). A store that
// cannot be opened even so, because there is none yet or because it was
// not closed cleanly and its write-ahead log must be replayed, is a
// *DiskFullError.
func OpenBadger(dir string, maxLimit int, o BadgerOptions) (*Exact, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating event store directory: %w", err)
	}
	readOnly, err := openMode(dir, o.MinFreeMB)
	if err != nil {
		return nil, err
	}
	b, err := openBadger(dir, maxLimit, o, readOnly)
	if readOnly && err != nil && needsReplay(err) {
		free, _ := FreeSpace(dir)
		return nil, &DiskFullError{Dir: dir, Free: free, ReserveMB: max(o.MinFreeMB, BadgerMinFree.MB()),
			Why: "it was not closed cleanly: its write-ahead log must be replayed, which needs that space (it cannot be read read-only)"}
	}
	if err != nil {
		return nil, err
	}
	return NewExact(b), nil
}

// BadgerOptions are the badger settings a relay operator chooses.
type BadgerOptions struct {
	// CacheMB is the cache of decompressed table blocks, in MiB: 0 is
	// DefaultCacheMB, below 0 off (every read decompresses its block
	// again). badger's own
	// default, 256 MiB, is a fifth of the heap of a relay that indexes a
	// million memories, while searches read only the few events they
	// return: DefaultCacheMB is enough for the hot blocks.
	CacheMB int
	// MinFreeMB is the disk guard's reserve (store.min_free_mb). When
	// set, a volume with less free space than BadgerMinFree opens the
	// store read-only (OpenBadger); 0 opens it read-write whatever the
	// free space.
	MinFreeMB int
}

// DefaultCacheMB is BadgerOptions.CacheMB's default.
const DefaultCacheMB = 64

func openBadger(path string, maxLimit int, bo BadgerOptions, readOnly bool) (b *badgerstore.BadgerBackend, err error) {
	modify := func(o badger.Options) badger.Options {
		mb := bo.CacheMB
		if mb == 0 {
			mb = DefaultCacheMB
		}
		return badgerAllocations(o.WithLogger(nil).WithBlockCacheSize(int64(max(mb, 0)) << 20)).WithReadOnly(readOnly)
	}
	// damaged files are found before badger opens them (check.go);
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
		MaxLimit:              max(maxLimit, PageSize),
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

// needsReplay recognizes badger's refusal to open read-only a store
// whose write-ahead log was left unreplayed (a crash, kill -9): like
// the lock's, it reaches us as text only (y.Wrapf formats with %+v).
func needsReplay(err error) bool {
	return errors.Is(err, badger.ErrTruncateNeeded) || strings.Contains(err.Error(), badger.ErrTruncateNeeded.Error())
}

// isDirectoryLocked recognizes badger's refusal to share its directory.
// badger formats the flock error into its message (y.Wrapf, %+v) instead
// of wrapping it, so its text is the only signal; this is the one place
// that reads it, and everyone above gets ErrStoreInUse.
func isDirectoryLocked(err error) bool {
	return strings.Contains(err.Error(), "Cannot acquire directory lock")
}
