package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
)

// Badger writes through mmap: it sizes a file with ftruncate, which takes
// no disk space, and the kernel finds the blocks when a page is first
// written. On a full volume that first write is SIGBUS, which ends the
// process. So what matters is not the size of the files badger maps (a
// memtable's write-ahead log is mapped at twice MemTableSize, a value log
// file at twice ValueLogFileSize) but what it writes into them at once,
// without a write of ours in between that the disk guard could refuse.
// Filling a tmpfs with 8 KiB events showed each of these:
//
//   - a memtable's write-ahead log grows with every accepted event; the
//     disk guard counts those bytes itself, event by event;
//   - a full memtable is flushed into a level-0 table of about its size
//     while its log is still on disk: MemTableSize at once;
//   - level 0 is compacted into the base level once it holds
//     NumLevelZeroTables tables, and writes stall at
//     NumLevelZeroTablesStall: every level-0 table and the base level
//     (about BaseLevelSize) are rewritten before the old ones go;
//   - events of ValueThreshold (1 MiB) or more are kept in the value log,
//     whose garbage collection rewrites up to one value log file.
//
// These settings bound each of them. The memtable is a quarter of
// badger's default (64 MiB), and level 0 stalls at 8 tables instead of
// 15: with badger's defaults a flush took 62 MiB at once and one level-0
// compaction of 5 tables 286 MiB, more than the default reserve.
const (
	badgerMemTableSize    = 16 << 20
	badgerL0Tables        = 5
	badgerL0Stall         = 8
	badgerBaseLevelSize   = 10 << 20 // badger's default
	badgerValueLogSize    = 16 << 20
	badgerReserveMarginMB = 32 // writes in flight, smaller compactions beside the big one, pages
)

// badgerAllocations applies the settings above to o.
func badgerAllocations(o badger.Options) badger.Options {
	return o.WithMemTableSize(badgerMemTableSize).
		WithNumLevelZeroTables(badgerL0Tables).
		WithNumLevelZeroTablesStall(badgerL0Stall).
		WithBaseLevelSize(badgerBaseLevelSize).
		WithValueLogFileSize(badgerValueLogSize)
}

// BadgerSpace is what the badger store can write at once, in MiB, with
// no accepted event in between: the least free space the disk guard may
// keep (store.min_free_mb).
type BadgerSpace struct {
	FlushMB      int // a memtable flushed into a level-0 table
	CompactionMB int // level 0 at its stall size and the base level, rewritten
	ValueLogMB   int // one value log file rewritten by its garbage collection
	MarginMB     int
}

// BadgerMinFree is the badger store's BadgerSpace.
var BadgerMinFree = BadgerSpace{
	FlushMB:      badgerMemTableSize >> 20,
	CompactionMB: (badgerL0Stall*badgerMemTableSize + badgerBaseLevelSize) >> 20,
	ValueLogMB:   badgerValueLogSize >> 20,
	MarginMB:     badgerReserveMarginMB,
}

// MB is the whole.
func (s BadgerSpace) MB() int { return s.FlushMB + s.CompactionMB + s.ValueLogMB + s.MarginMB }

func (s BadgerSpace) String() string {
	return fmt.Sprintf("badger writes up to %d MiB at once: a memtable flush %d MiB + a level-0 compaction %d MiB (%d tables of %d MiB and the %d MiB base level) + a value log file %d MiB + %d MiB margin",
		s.MB(), s.FlushMB, s.CompactionMB, badgerL0Stall, badgerMemTableSize>>20, badgerBaseLevelSize>>20, s.ValueLogMB, s.MarginMB)
}

// MinFreeMB is the least reserve the disk guard may keep under store:
// BadgerMinFree for badger, 0 for a store whose files are not on the
// data volume (PostgreSQL) or not known.
func MinFreeMB(store eventstore.Store) int {
	if _, ok := badgerOf(store); ok {
		return BadgerMinFree.MB()
	}
	return 0
}

// ReadOnly reports whether store was opened read-only (OpenBadger on a
// full disk): every write to it fails.
func ReadOnly(store eventstore.Store) bool {
	b, ok := badgerOf(store)
	return ok && b.DB != nil && b.DB.Opts().ReadOnly
}

// badgerOf is the badger backend under store's wrappers, if it is one.
func badgerOf(store eventstore.Store) (*badgerstore.BadgerBackend, bool) {
	for {
		if b, ok := store.(*badgerstore.BadgerBackend); ok {
			return b, true
		}
		u, ok := store.(unwrapper)
		if !ok {
			return nil, false
		}
		store = u.Unwrap()
	}
}

// ErrDiskFull matches (errors.Is) a store that cannot be opened for want
// of disk space.
var ErrDiskFull = errors.New("disk full")

// DiskFullError is OpenBadger's refusal to open a store it cannot open
// without space: one line that says why and what to do.
type DiskFullError struct {
	Dir       string
	Free      uint64 // bytes
	ReserveMB int    // store.min_free_mb, at least BadgerMinFree
	Why       string
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("event store %s: disk full: %d MiB free, less than the %d MiB badger may write on its own once open, and %s; free space until at least %d MiB are free (store.min_free_mb) and start again",
		e.Dir, e.Free>>20, BadgerMinFree.MB(), e.Why, e.ReserveMB)
}

func (e *DiskFullError) Is(target error) bool { return target == ErrDiskFull }

// openMode decides how OpenBadger opens dir under a disk reserve of
// reserveMB: read-write while the volume has room for what badger writes
// on its own (BadgerMinFree: replaying and flushing a write-ahead log,
// compacting), the disk guard refusing events below the reserve; below
// that, read-only; and not at all when there is no store yet to read.
// No reserve (0) or an unmeasurable volume is read-write.
func openMode(dir string, reserveMB int) (readOnly bool, err error) {
	if reserveMB <= 0 {
		return false, nil
	}
	free, err := FreeSpace(dir)
	if err != nil || free >= uint64(BadgerMinFree.MB())<<20 {
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(dir, badger.ManifestFilename)); err != nil {
		return false, &DiskFullError{Dir: dir, Free: free, ReserveMB: max(reserveMB, BadgerMinFree.MB()), Why: "there is no store yet to open read-only"}
	}
	return true, nil
}

// Close closes the store. Badger flushes its memtables into level-0
// tables as it closes, through mmap: where the volume has less free space
// than those flushes take (something else filled it past the reserve),
// the store is left as kill -9 would leave it, its write-ahead log on
// disk for the next start to replay, rather than ending in SIGBUS.
func (s *Exact) Close() {
	if b, ok := s.Store.(*badgerstore.BadgerBackend); ok && b.DB != nil && !b.DB.Opts().ReadOnly {
		if free, err := FreeSpace(b.Path); err == nil && free < flushSpace(b.Path) {
			return
		}
	}
	s.Store.Close()
}

// flushSpace is what flushing dir's memtables may take: their logs'
// written part, and a margin for the tables' indexes.
func flushSpace(dir string) uint64 {
	need := uint64(4 << 20)
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	for _, m := range mems {
		if fi, err := os.Stat(m); err == nil {
			need += allocated(fi)
		}
	}
	return need
}
