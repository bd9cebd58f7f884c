package rights

// Journal keeps the records of a list (the audit trail, the erasure
// list): a file of lines for a relay alone on its store (lineFile), a
// table in the shared database for several instances over PostgreSQL
// (relay/store/postgres), so that an erasure made on one instance is
// refused by all of them and the audit trail is one.
type Journal interface {
	// Open hands every stored record to apply, oldest first, and then,
	// for a journal other instances append to, each record they append,
	// as it arrives, from another goroutine.
	Open(apply func(line []byte) error) error
	// Append stores records (each without a line break) before it
	// returns; they are not handed to apply.
	Append(lines ...[]byte) error
	Close() error
}

// fileJournal is a Journal on a lineFile.
type fileJournal struct {
	path string
	lf   *lineFile
}

// FileJournal is the journal of a relay alone on its store: the file at
// path (created owner-only).
func FileJournal(path string) Journal { return &fileJournal{path: path} }

func (j *fileJournal) Open(apply func([]byte) error) error {
	lf, err := openLineFile(j.path, apply)
	if err != nil {
		return err
	}
	j.lf = lf
	return nil
}

func (j *fileJournal) Append(lines ...[]byte) error { return j.lf.append(lines...) }

func (j *fileJournal) Close() error {
	if j.lf == nil {
		return nil
	}
	return j.lf.close()
}
