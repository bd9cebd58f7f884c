package rights

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// lineFile is an append-only file of newline-terminated records, shared by
// the audit log and the erasure list. Both must survive a crash in the
// middle of a write: a record counts only once its line and newline are on
// disk, and a partial last line left by a crash is cut off on open, so the
// next append starts on a clean line instead of gluing itself to garbage.
type lineFile struct {
	f    *os.File
	size int64 // end of the last complete, valid record
}

// openLineFile opens (creating with private permissions) the file at path
// and hands every stored line to parse, oldest first. A line that fails to
// parse is tolerated only when it is the last one: that is what a torn write
// looks like (a partial line, or zeros where the filesystem extended the
// file before the data reached the disk). A bad line followed by good ones
// is damage or tampering, and is reported rather than skipped, since
// silently dropping an erasure or an audit record would undo its purpose.
func openLineFile(path string, parse func(line []byte) error) (*lineFile, error) {
	if path == "" {
		return nil, errors.New("no file path given")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	lf, err := loadLines(f, parse)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lf, nil
}

func loadLines(f *os.File, parse func([]byte) error) (*lineFile, error) {
	// The file may predate us with looser permissions; what it lists is
	// about people, so it is nobody else's to read.
	if err := f.Chmod(0o600); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	var good int64
	for lineNo, rest := 1, data; len(rest) > 0; lineNo++ {
		line, after, complete := bytes.Cut(rest, []byte("\n"))
		trimmed := bytes.TrimSpace(line)
		var perr error
		switch {
		case !complete:
			perr = errors.New("line has no end")
		case len(trimmed) > 0:
			perr = parse(trimmed)
		}
		if perr != nil {
			if !isBlankTail(after) {
				return nil, fmt.Errorf("line %d is corrupt: %w", lineNo, perr)
			}
			break // torn last write: drop it below
		}
		good += int64(len(line)) + 1
		rest = after
	}
	lf := &lineFile{f: f, size: good}
	if good < int64(len(data)) {
		if err := f.Truncate(good); err != nil {
			return nil, fmt.Errorf("cutting off a torn last line: %w", err)
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
	}
	return lf, nil
}

// isBlankTail reports whether nothing but whitespace or zero bytes follows:
// the remains of one interrupted write, not further records.
func isBlankTail(b []byte) bool {
	return len(bytes.Trim(b, " \t\r\n\x00")) == 0
}

// append writes the lines (each without its newline) in one write and
// fsyncs before returning. On failure the file is cut back to where it was,
// so memory and disk keep agreeing on what was recorded.
func (lf *lineFile) append(lines ...[]byte) error {
	if lf.f == nil {
		return errors.New("file is closed")
	}
	var buf bytes.Buffer
	for _, l := range lines {
		if bytes.ContainsAny(l, "\n\r") {
			return errors.New("record contains a line break")
		}
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if buf.Len() == 0 {
		return nil
	}
	n, err := lf.f.Write(buf.Bytes())
	if err == nil {
		err = lf.f.Sync()
	}
	if err != nil {
		_ = lf.f.Truncate(lf.size) // best effort; the write error is what matters
		return err
	}
	lf.size += int64(n)
	return nil
}

func (lf *lineFile) close() error {
	if lf.f == nil {
		return nil
	}
	err := lf.f.Close()
	lf.f = nil
	return err
}
