package search

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/snowclaw/snowclaw/search/doclog"
	"github.com/snowclaw/snowclaw/search/session"
	"github.com/snowclaw/snowclaw/search/thread"
	"github.com/snowclaw/snowclaw/search/vector"
)

// state is one complete generation of the index: the doc log and the RAM
// structures derived from it (docs, keyword parts, vectors, versions).
// Rebuild fills a new state on the side and swaps it in, so searches keep
// working meanwhile.
type state struct {
	meta     indexMeta   // Gen 0 when the index has no directory
	log      *doclog.Log // nil without a directory
	rd       *os.File    // the log opened for reading docs back (doctext.go)
	analyzer analysis.Analyzer

	docs       map[string]*Doc
	parts      *partSet
	vecs       vector.Index
	vecsLoaded bool                      // replaying over a loaded graph: the log's vectors are not added
	fromSnap   bool                      // the vectors came from a graph snapshot (snapshot.go)
	superseded map[string]map[string]int // id → author of a doc superseding it → how many
	curators   map[string]bool           // authors whose supersedes hide anyone's doc
	versions   addrIndex                 // address → ids of its indexed versions
	threads    *thread.Set
	sessions   *session.Set

	diskDocs int // non-volatile docs

	// strs holds one copy of each author, source, tier, group, model and
	// scope string: they repeat across most docs (a few authors write
	// them all), and the doc log's decoder makes a copy per doc, about
	// 150 bytes of every doc's heap.
	strs map[string]string

	// floor is the vector side of the relevance floor and floorDocs the
	// number of vectors it was calibrated on (floor.go).
	floor     float64
	floorDocs int
}

// graphThreshold is where the vectors move from a scan to a graph
// (vector.Threshold; tests lower it).
var graphThreshold = vector.Threshold

func newState(dim int, curators []string, a analysis.Analyzer) *state {
	cur := make(map[string]bool, len(curators))
	for _, pk := range curators {
		cur[pk] = true
	}
	return &state{
		analyzer:   a,
		curators:   cur,
		docs:       make(map[string]*Doc),
		parts:      newPartSet(dim),
		vecs:       vector.NewAuto(dim, graphThreshold, vector.DefaultParams),
		superseded: make(map[string]map[string]int),
		versions:   newAddrIndex(),
		threads:    thread.NewSet(),
		sessions:   session.NewSet(session.Window),
		strs:       make(map[string]string),
	}
}

func (s *state) intern(x string) string {
	if c, ok := s.strs[x]; ok {
		return c
	}
	s.strs[x] = x
	return x
}

func (s *state) close() error {
	if s.rd != nil {
		_ = s.rd.Close()
	}
	if s.log != nil {
		return s.log.Close()
	}
	return nil
}

// putMaps records d (already in the log, d.off set, a its analysis) in
// the RAM maps, replacing an older doc with the same id, whose terms are
// read back to take them out: an error is the log's damage.
func (s *state) putMaps(d *Doc, v []float32, a analysed) error {
	d.Pubkey, d.Source, d.Tier = s.intern(d.Pubkey), s.intern(d.Source), s.intern(d.Tier)
	d.Group, d.Model, d.Scope = s.intern(d.Group), s.intern(d.Model), s.intern(d.Scope)
	if strings.HasSuffix(d.D, d.Topic) {
		// a topic is the tail of its d tag: the doc log's decoder gave
		// it a copy of its own
		d.Topic = d.D[len(d.D)-len(d.Topic):]
	}
	if old, ok := s.docs[d.ID]; ok {
		if err := s.dropMaps(old); err != nil {
			return err
		}
	}
	s.keep(d)
	s.parts.add(d, a, v)
	if v != nil && !s.vecsLoaded { // keyword-only docs have none
		s.vecs.Add(d.ID, v)
	}
	s.link(d)
	return nil
}

// link records d, already in its part, in the maps of docs, versions,
// supersedes, threads and sessions.
func (s *state) link(d *Doc) {
	s.docs[d.ID] = d
	for _, id := range d.Supersedes {
		by := s.superseded[id]
		if by == nil {
			by = make(map[string]int, 1)
			s.superseded[id] = by
		}
		by[d.Pubkey]++
	}
	if k, ok := addrOf(d); ok {
		s.versions.add(k, d.ID)
	}
	s.threads.Add(threadKey(d), d.CreatedAt, d.ID, d.words)
	s.sessions.Add(sessionKey(d), d.ID, d.CreatedAt)
	if !d.Volatile {
		s.diskDocs++
	}
}

// dropMaps takes an indexed doc out of the RAM maps; its terms are read
// back first (an error is the log's damage, and changes nothing).
func (s *state) dropMaps(d *Doc) error {
	a, err := s.analyseIndexed(d)
	if err != nil {
		return err
	}
	delete(s.docs, d.ID)
	if s.vecsLoaded { // the vector sums are summed again afterwards
		s.parts.remove(d, a, nil)
	} else {
		v, _ := s.vecs.Get(d.ID)
		s.parts.remove(d, a, v)
		s.vecs.Remove(d.ID)
	}
	for _, id := range d.Supersedes {
		by := s.superseded[id]
		if by[d.Pubkey]--; by[d.Pubkey] <= 0 {
			delete(by, d.Pubkey)
		}
		if len(by) == 0 {
			delete(s.superseded, id)
		}
	}
	if k, ok := addrOf(d); ok {
		s.versions.remove(k, d.ID)
	}
	s.threads.Remove(threadKey(d), d.CreatedAt, d.ID)
	s.sessions.Remove(d.ID)
	if !d.Volatile {
		s.diskDocs--
	}
	return nil
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
	k, ok := addrOf(d)
	if !ok {
		return false
	}
	newer := false
	s.versionsAt(k, func(o *Doc) bool {
		newer = o != d && (o.CreatedAt > d.CreatedAt || (o.CreatedAt == d.CreatedAt && o.ID > d.ID))
		return !newer
	})
	return newer
}

// writeStores puts docs into the doc log; volatile docs never reach it,
// and a doc that turns volatile is deleted from it.
func (s *state) writeStores(docs []*Doc, vecs [][]float32) error {
	if s.log == nil {
		return nil
	}
	for i, d := range docs {
		old := s.docs[d.ID]
		if d.Volatile {
			if old != nil && !old.Volatile {
				if err := s.log.AppendDel(d.ID); err != nil {
					return err
				}
			}
			continue
		}
		off, err := appendPut(s.log, d, vecs[i])
		if err != nil {
			return err
		}
		d.off = off
		if old != nil && !old.Volatile {
			s.log.Dead++ // old's put record, which this one overrides
		}
	}
	return s.log.Flush()
}

func (s *state) deleteStores(ids []string) error {
	if s.log == nil {
		return nil
	}
	for _, id := range ids {
		if d, ok := s.docs[id]; ok && !d.Volatile {
			if err := s.log.AppendDel(id); err != nil {
				return err
			}
		}
	}
	return s.log.Flush()
}

// compactLogIfNeeded rewrites the doc log once dead records outnumber live
// ones, so a long-running relay's log stays proportional to its docs.
// Searches go on meanwhile, reading texts back from the old file by the
// old offsets; locked (the index's write lock) swaps in the new file's
// reader and offsets at once.
func (s *state) compactLogIfNeeded(dir string, locked func(func())) error {
	if s.log == nil || s.log.Dead < 4096 || s.log.Dead < s.diskDocs {
		return nil
	}
	path := s.meta.LogPath(dir)
	if err := s.log.Flush(); err != nil {
		return err
	}
	type moved struct {
		d   *Doc
		off int64
	}
	news := make([]moved, 0, s.diskDocs)
	// The new log is complete and renamed into place before the old one is
	// closed; if anything fails first, the old log stays in use.
	size, sum, err := doclog.WriteAtomic(path, func(put func([]byte, []float32) (int64, error)) error {
		for id, d := range s.docs {
			if d.Volatile {
				continue
			}
			f, err := s.full(d) // the text is in the old log
			if err != nil {
				return err
			}
			js, err := json.Marshal(f)
			if err != nil {
				return err
			}
			v, _ := s.vecs.Get(id)
			off, err := put(js, v)
			if err != nil {
				return err
			}
			news = append(news, moved{d, off})
		}
		return nil
	})
	if err != nil {
		return err
	}
	rd, err := os.Open(path)
	if err != nil {
		return err // the old reader and offsets still agree (the old inode)
	}
	locked(func() {
		for _, m := range news {
			m.d.off = m.off
		}
		_ = s.rd.Close()
		s.rd = rd
	})
	return s.log.Reopen(size, sum)
}
