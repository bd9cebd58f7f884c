package search

import (
	"fmt"
	"os"

	"github.com/blevesearch/bleve/v2"
)

// state is one complete generation of the index: the two bleve indexes, the
// doc log and the RAM maps derived from them. Rebuild fills a new state on
// the side and swaps it in, so searches keep working meanwhile.
type state struct {
	meta  indexMeta // Gen 0 when the index has no directory
	disk  bleve.Index
	mem   bleve.Index // volatile docs only, never on disk
	alias bleve.IndexAlias
	log   *docLog // nil without a directory

	docs       map[string]*Doc
	vecs       vectorIndex
	superseded map[string]map[string]int // id → author of a doc superseding it → how many
	curators   map[string]bool           // authors whose supersedes hide anyone's doc
	versions   map[string][]string       // address → ids of its indexed versions
	threads    *threadSet

	memBatches int // batches since the RAM index was last compacted
	diskDocs   int // non-volatile docs, to check against bleve on Open
}

func newState(dim int, curators []string) *state {
	cur := make(map[string]bool, len(curators))
	for _, pk := range curators {
		cur[pk] = true
	}
	return &state{
		curators:   cur,
		docs:       make(map[string]*Doc),
		vecs:       newVectorIndex(dim),
		superseded: make(map[string]map[string]int),
		versions:   make(map[string][]string),
		threads:    newThreadSet(),
	}
}

// openBleve attaches the bleve indexes: a disk index at path, or a RAM one
// when path is "".
func (s *state) openBleve(path string, create bool) error {
	var err error
	switch {
	case path == "":
		s.disk, err = newMemIndex()
	case create:
		s.disk, err = createDiskIndex(path)
	default:
		s.disk, err = openDiskIndex(path)
	}
	if err != nil {
		return err
	}
	if s.mem, err = newMemIndex(); err != nil {
		_ = s.disk.Close()
		return err
	}
	// The alias needs the mapping to know that BM25 statistics must be
	// gathered across both indexes.
	alias := bleve.NewIndexAlias(s.disk, s.mem)
	if err := alias.SetIndexMapping(newMapping()); err != nil {
		_ = s.mem.Close()
		_ = s.disk.Close()
		return err
	}
	s.alias = alias
	return nil
}

func (s *state) close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if s.log != nil {
		keep(s.log.close())
	}
	if s.mem != nil {
		keep(s.mem.Close())
	}
	if s.disk != nil {
		keep(s.disk.Close())
	}
	return first
}

// putMaps records d (already in bleve and the log) in the RAM maps,
// replacing an older doc with the same id.
func (s *state) putMaps(d *Doc, v []float32) {
	if old, ok := s.docs[d.ID]; ok {
		s.dropMaps(old)
	}
	s.docs[d.ID] = d
	if v != nil { // keyword-only docs have none
		s.vecs.Add(d.ID, v)
	}
	for _, id := range d.Supersedes {
		by := s.superseded[id]
		if by == nil {
			by = make(map[string]int, 1)
			s.superseded[id] = by
		}
		by[d.Pubkey]++
	}
	if d.Address != "" {
		s.versions[d.Address] = append(s.versions[d.Address], d.ID)
	}
	s.threads.add(d)
	if !d.Volatile {
		s.diskDocs++
	}
}

func (s *state) dropMaps(d *Doc) {
	delete(s.docs, d.ID)
	s.vecs.Remove(d.ID)
	for _, id := range d.Supersedes {
		by := s.superseded[id]
		if by[d.Pubkey]--; by[d.Pubkey] <= 0 {
			delete(by, d.Pubkey)
		}
		if len(by) == 0 {
			delete(s.superseded, id)
		}
	}
	if d.Address != "" {
		vs := s.versions[d.Address]
		for i, id := range vs {
			if id == d.ID {
				vs = append(vs[:i], vs[i+1:]...)
				break
			}
		}
		if len(vs) == 0 {
			delete(s.versions, d.Address)
		} else {
			s.versions[d.Address] = vs
		}
	}
	s.threads.remove(d)
	if !d.Volatile {
		s.diskDocs--
	}
}

// hidden tells whether d is an old version: named in the supersedes of
// a doc by its own author or a curator, or not the newest doc at its
// address.
func (s *state) hidden(d *Doc) bool {
	for by := range s.superseded[d.ID] {
		if by == d.Pubkey || s.curators[by] {
			return true
		}
	}
	if d.Address == "" {
		return false
	}
	for _, id := range s.versions[d.Address] {
		o := s.docs[id]
		if o != nil && o != d && (o.CreatedAt > d.CreatedAt || (o.CreatedAt == d.CreatedAt && o.ID > d.ID)) {
			return true
		}
	}
	return false
}

// writeStores puts docs into bleve and the log. Volatile docs go to the RAM
// index only; a doc that changes volatility is deleted from the other side.
func (s *state) writeStores(docs []*Doc, vecs [][]float32) error {
	diskB, memB := s.disk.NewBatch(), s.mem.NewBatch()
	for i, d := range docs {
		old := s.docs[d.ID]
		if d.Volatile {
			if old != nil && !old.Volatile {
				diskB.Delete(d.ID)
				if s.log != nil {
					if err := s.log.appendDel(d.ID); err != nil {
						return err
					}
				}
			}
			if err := memB.Index(d.ID, toBleve(d)); err != nil {
				return err
			}
			continue
		}
		if old != nil && old.Volatile {
			memB.Delete(d.ID)
		}
		if s.log != nil {
			if err := s.log.appendPut(d, vecs[i]); err != nil {
				return err
			}
		}
		if err := diskB.Index(d.ID, toBleve(d)); err != nil {
			return err
		}
	}
	if s.log != nil {
		if err := s.log.flush(); err != nil {
			return err
		}
	}
	return s.flushBatches(diskB, memB)
}

func (s *state) deleteStores(ids []string) error {
	diskB, memB := s.disk.NewBatch(), s.mem.NewBatch()
	for _, id := range ids {
		d, ok := s.docs[id]
		if !ok {
			continue
		}
		if d.Volatile {
			memB.Delete(id)
			continue
		}
		if s.log != nil {
			if err := s.log.appendDel(id); err != nil {
				return err
			}
		}
		diskB.Delete(id)
	}
	if s.log != nil {
		if err := s.log.flush(); err != nil {
			return err
		}
	}
	return s.flushBatches(diskB, memB)
}

func (s *state) flushBatches(diskB, memB *bleve.Batch) error {
	if diskB.Size() > 0 {
		if err := s.disk.Batch(diskB); err != nil {
			return fmt.Errorf("search: bleve: %w", err)
		}
	}
	if memB.Size() > 0 {
		if err := s.mem.Batch(memB); err != nil {
			return fmt.Errorf("search: bleve (RAM): %w", err)
		}
		s.memBatches++
	}
	return nil
}

// compactLogIfNeeded rewrites the doc log once dead records outnumber live
// ones, so a long-running relay's log stays proportional to its docs.
func (s *state) compactLogIfNeeded(dir string) error {
	if s.log == nil || s.log.dead < 4096 || s.log.dead < s.diskDocs {
		return nil
	}
	path := s.meta.logPath(dir)
	if err := s.log.flush(); err != nil {
		return err
	}
	// The new log is complete and renamed into place before the old one is
	// closed; if anything fails first, the old log stays in use.
	err := writeDocLogAtomic(path, func(put func(*Doc, []float32) error) error {
		for id, d := range s.docs {
			if d.Volatile {
				continue
			}
			v, _ := s.vecs.Get(id)
			if err := put(d, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_ = s.log.f.Close() // its inode is already replaced; nothing left to lose
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	s.log.f = f
	s.log.w.Reset(f)
	s.log.dead = 0
	return nil
}
