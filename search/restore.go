package search

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"sort"

	"github.com/snowclaw/snowclaw/search/docimage"
	"github.com/snowclaw/snowclaw/search/doclog"
	"github.com/snowclaw/snowclaw/search/keyword"
	"github.com/snowclaw/snowclaw/search/vector"
)

// Reopening an index used to replay its doc log: decode every doc's JSON
// and analyse its text again (at 100k docs three quarters of a restart's
// CPU). Close now also writes an image of the RAM state beside the log
// (search/docimage): the docs as kept, without text, and each part's
// postings. Open reads it instead of the log when it is the image of
// exactly this log (generation, length and record hash, as the vector
// snapshot), with the vectors from the graph snapshot or, without a
// matching one, read back from the log by offset (no text decoded).
// Volatile docs are left out whole: nothing of them reaches the image.
// Like the snapshot, the image is removed once read: after a crash there
// is none, and Open replays the log.

// saveImage writes s's image for the next Open; the caller has flushed
// the log.
func (s *state) saveImage(dir string) error {
	parts, ok := s.imageParts()
	if s.log == nil || dir == "" || !ok {
		return nil // the next Open replays the log
	}
	docs := make([]*Doc, 0, s.diskDocs)
	for _, d := range s.docs {
		if !d.Volatile {
			docs = append(docs, d)
		}
	}
	// log order, mostly time order, in which threads are rebuilt fastest
	sort.Slice(docs, func(i, j int) bool { return docs[i].off < docs[j].off })
	return writeAtomic(s.meta.ImagePath(dir), func(f io.Writer) (bool, error) {
		w := docimage.NewWriter(f, docimage.Header{Tag: logTag(s.meta.Gen, s.log), Dim: s.parts.dim, Dead: s.log.Dead,
			Docs: len(docs), Parts: len(parts)}, sharedTag)
		for _, d := range docs {
			w.Doc(&docimage.Doc{ID: d.ID, Pubkey: d.Pubkey, D: d.D, Topic: d.Topic, Tier: d.Tier, Group: d.Group,
				Source: d.Source, Model: d.Model, Scope: d.Scope, Learnt: d.LearntFrom, Speaker: d.spk, Kind: d.Kind,
				Version: d.Version, CreatedAt: d.CreatedAt, Off: d.off, Confidence: d.Confidence, Supersedes: d.Supersedes,
				KeywordOnly: d.KeywordOnly, Words: d.words, Slot: d.slot, Tags: d.tagv})
		}
		var buf []byte
		for _, p := range parts {
			buf = s.parts.byScope[p.Scope].kw.AppendEncoded(buf[:0]) // one part's at a time
			p.Postings = buf
			w.Part(p)
		}
		return true, w.Close()
	})
}

// imageParts are the parts as the image keeps them, without those of
// volatile docs only; ok is false when a part mixes volatile docs with
// others (memsearch's scopes never do), whose statistics include them.
func (s *state) imageParts() (out []*docimage.Part, ok bool) {
	for scope, p := range s.parts.byScope {
		kept, volatile := 0, 0
		for _, d := range p.slots {
			if d != nil && d.Volatile {
				volatile++
			} else if d != nil {
				kept++
			}
		}
		if volatile > 0 && kept > 0 {
			return nil, false
		}
		if kept > 0 {
			out = append(out, &docimage.Part{Scope: scope, Slots: len(p.slots), VN: p.vn, ChatN: p.chatN, ChatW: p.chatW, VSum: p.vsum})
		}
	}
	return out, true
}

// restoreState reads the state of generation m from its image, or
// returns nil when there is none that matches the log. The image is
// removed either way.
func (ix *Index) restoreState(m indexMeta) *state {
	path := m.ImagePath(ix.dir)
	img, err := os.ReadFile(path)
	_ = os.Remove(path)
	if err != nil {
		return nil
	}
	var snap *vector.Auto
	var tag []byte
	loaded := make(chan struct{})
	go func() { snap, tag = ix.loadVectors(m); close(loaded) }() // on the other core
	st := ix.newState()
	st.meta = m
	withVec, err := st.restore(img, ix.dir, ix.opts.Progress)
	<-loaded
	if err != nil {
		_ = st.close()
		return nil // not this log's, or damaged: the log says it all
	}
	_ = os.Remove(m.SnapPath(ix.dir))
	if snap != nil && bytes.Equal(tag, logTag(m.Gen, st.log)) && snap.Len() == len(withVec) {
		st.vecs, st.fromSnap = snap, true
		return st
	}
	for _, d := range withVec {
		p, err := doclog.ReadPut(st.rd, d.off)
		var v []float32
		if err == nil {
			_, v, err = doclog.DecodePut(p)
		}
		if err != nil || len(v) != st.parts.dim {
			_ = st.close()
			return nil
		}
		st.vecs.Add(d.ID, v)
	}
	return st
}

// restore fills the empty state s from img, checking that the image is
// of s's log and that its docs and parts agree; it returns the docs that
// have a vector.
func (s *state) restore(img []byte, dir string, progress func(done, total int64)) (withVec []*Doc, err error) {
	var docs []*Doc
	var parts []*part
	var postings [][]byte
	h, err := docimage.Read(img, func(r *docimage.Doc) error {
		docs = append(docs, &Doc{ID: r.ID, Kind: r.Kind, Pubkey: r.Pubkey, CreatedAt: r.CreatedAt, D: r.D, Topic: r.Topic,
			Tier: r.Tier, Group: r.Group, Source: r.Source, Model: r.Model, Confidence: r.Confidence,
			Supersedes: r.Supersedes, Version: r.Version, LearntFrom: r.Learnt, KeywordOnly: r.KeywordOnly,
			Scope: r.Scope, off: r.Off, tagv: r.Tags, spk: r.Speaker, words: r.Words, slot: r.Slot})
		return nil
	}, func(r *docimage.Part) error {
		if len(r.VSum) != s.parts.dim || s.parts.byScope[r.Scope] != nil {
			return docimage.ErrDamaged
		}
		p := &part{scope: r.Scope, slots: make([]*Doc, r.Slots), vsum: append([]float64(nil), r.VSum...),
			vn: r.VN, chatN: r.ChatN, chatW: r.ChatW}
		s.parts.byScope[r.Scope], postings = p, append(postings, r.Postings)
		parts = append(parts, p)
		return nil
	}, func(done int64) { progress(done, int64(len(img))) })
	if err != nil || len(h.Tag) != 24 || h.Dim != s.parts.dim || binary.LittleEndian.Uint64(h.Tag) != uint64(s.meta.Gen) {
		return nil, docimage.ErrDamaged
	}
	decoded := make(chan error, 1)
	go func() { // the postings on the other core while the docs are linked
		for i, p := range parts {
			kw, err := keyword.DecodePostings(postings[i])
			if err != nil || kw.Slots() != len(p.slots) {
				decoded <- docimage.ErrDamaged
				return
			}
			p.kw = kw
		}
		decoded <- nil
	}()
	s.docs, s.versions.one = make(map[string]*Doc, len(docs)), make(map[uint64]string, len(docs)) // no growing
	for _, d := range docs {
		p := s.parts.byScope[d.Scope]
		if p == nil || int(d.slot) >= len(p.slots) || p.slots[d.slot] != nil {
			return nil, docimage.ErrDamaged
		}
		p.slots[d.slot] = d
		p.docs++
		s.link(d)
		if !d.KeywordOnly {
			withVec = append(withVec, d)
		}
	}
	if err := <-decoded; err != nil || len(s.docs) != len(docs) { // an id twice
		return nil, docimage.ErrDamaged
	}
	for _, p := range s.parts.byScope {
		if p.docs != p.kw.Docs() {
			return nil, docimage.ErrDamaged
		}
	}
	for _, x := range h.Strings {
		s.strs[x] = x
	}
	if err := s.openReader(s.meta.LogPath(dir)); err != nil {
		return nil, err
	}
	size, sum := int64(binary.LittleEndian.Uint64(h.Tag[8:])), binary.LittleEndian.Uint64(h.Tag[16:])
	if s.log, err = doclog.OpenAppend(s.meta.LogPath(dir), size, sum); err != nil {
		return nil, err
	}
	s.log.Dead = h.Dead
	return withVec, nil
}
