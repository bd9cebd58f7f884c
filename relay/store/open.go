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
func OpenBadger(dir string, maxLimit int, o BadgerOptions) (*Exact, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating event store directory: %w", err)
	}
	b, err := openBadger(dir, maxLimit, o)
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
}

// DefaultCacheMB is BadgerOptions.CacheMB's default.
const DefaultCacheMB = 64

func openBadger(path string, maxLimit int, bo BadgerOptions) (b *badgerstore.BadgerBackend, err error) {
	modify := func(o badger.Options) badger.Options {
		mb := bo.CacheMB
		if mb == 0 {
			mb = DefaultCacheMB
		}
		return o.WithLogger(nil).WithBlockCacheSize(int64(max(mb, 0)) << 20)
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

// isDirectoryLocked recognizes badger's refusal to share its directory.
// badger formats the flock error into its message (y.Wrapf, %+v) instead
// of wrapping it, so its text is the only signal; this is the one place
// that reads it, and everyone above gets ErrStoreInUse.
func isDirectoryLocked(err error) bool {
	return strings.Contains(err.Error(), "Cannot acquire directory lock")
}
