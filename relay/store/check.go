package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// ErrStoreDamaged is what a damaged event store's error matches
// (errors.Is): the relay does not start on it.
var ErrStoreDamaged = errors.New("event store is damaged")

// StoreDamagedError names the damaged file and says what to do.
type StoreDamagedError struct {
	Dir  string // the event store directory
	File string // the damaged file
	Err  error  // what reading it said
}

func (e *StoreDamagedError) Error() string {
	return fmt.Sprintf("event store %s is damaged: %s cannot be read (%v). "+
		"Nothing was changed on disk. Restore the %s directory from a backup taken while the relay was stopped "+
		"(a file cut short usually means the disk filled up or the machine lost power during a write), then start again",
		e.Dir, filepath.Base(e.File), e.Err, e.Dir)
}

func (e *StoreDamagedError) Unwrap() error { return e.Err }

func (e *StoreDamagedError) Is(target error) bool { return target == ErrStoreDamaged }

// checkTables opens each table file the manifest lists the way badger
// will, but here, where a panic can be caught: badger opens them in its
// own goroutines, so a truncated .sst would kill the process with a raw
// trace. Only the footer and index are read (cheap at every start); a
// table whose index checksum fails is reported too, where badger would
// silently drop it and the events in it.
func checkTables(o badger.Options) error {
	fp, err := os.Open(filepath.Join(o.Dir, badger.ManifestFilename))
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new store
	} else if err != nil {
		return err
	}
	mf, _, err := badger.ReplayManifestFile(fp, o.ExternalMagicVersion)
	fp.Close()
	if err != nil {
		return &StoreDamagedError{Dir: o.Dir, File: badger.ManifestFilename, Err: err}
	}
	for id, tm := range mf.Tables {
		if tm.KeyID != 0 {
			continue // encrypted: badger alone holds the key
		}
		path := table.NewFilename(id, o.Dir)
		if err := checkTable(path, o, tm.Compression); err != nil {
			return &StoreDamagedError{Dir: o.Dir, File: path, Err: err}
		}
	}
	return nil
}

func checkTable(path string, o badger.Options, c options.CompressionType) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("its footer or index is cut short or corrupt: %s", firstLine(fmt.Sprint(p)))
		}
	}()
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	// Close, never the table's DecrRef: at zero references it deletes
	// the file. Some failed opens close mf already; again is harmless.
	defer mf.Close(-1)
	_, err = table.OpenTable(mf, table.Options{
		ReadOnly: true, BlockSize: o.BlockSize, BloomFalsePositive: o.BloomFalsePositive,
		Compression: c, ChkMode: options.NoVerification,
	})
	return err
}

// firstLine is the first line of a panic message worth showing; badger's
// start with a blank line and a "== Recovering ==" banner.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "==") {
			return l
		}
	}
	return "no message"
}
