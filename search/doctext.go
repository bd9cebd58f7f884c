package search

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/snowclaw/snowclaw/search/doclog"
	"github.com/snowclaw/snowclaw/search/speaker"
	"github.com/snowclaw/snowclaw/search/tagpack"
)

// A doc's text is most of what it weighs, and a search needs it for only
// a handful of docs: the results it returns, the few best hits whose words
// feed pseudo-relevance feedback, a doc being replaced or removed (whose
// terms leave the keyword index), the docs of a conflict. So an indexed
// doc that is in the doc log keeps its text there only: keep drops it
// from RAM after reading what every search needs from it (speaker, chat
// word count), and readDoc reads the doc's own put record back, by the
// offset writeStores or the replay noted. Volatile docs, which never
// reach the disk, and docs of an index without a directory keep their
// text in RAM. The tags are kept packed (search/tagpack).

// keep readies d, a doc about to be indexed, for its life in RAM.
func (s *state) keep(d *Doc) {
	d.spk = s.intern(speaker.Of(d.Text))
	if threadKey(d) != "" {
		d.words = int32(countWords(d.Text))
	}
	d.tagv = tagpack.Pack(d.Tags, d.D, s.intern, sharedTag)
	d.Tags = nil
	if d.off > 0 {
		d.Text = ""
	}
}

// sharedTag: t tags (categories) and h tags (groups) repeat across docs.
func sharedTag(name string) bool { return name == "t" || name == "h" }

// export is d as callers see it, with its tags and, if withText, its
// text (read back from the doc log when it is there).
func (s *state) export(d *Doc, withText bool) (Doc, error) {
	c := *d
	c.Tags = tagpack.Unpack(d.tagv)
	c.off, c.tagv, c.spk, c.words, c.slot = 0, nil, "", 0, 0
	if withText && d.off > 0 {
		full, err := s.readDoc(d)
		if err != nil {
			return Doc{}, err
		}
		c.Text = full.Text
	}
	return c, nil
}

// full is d with its text and tags, for analysis and the log's
// compaction.
func (s *state) full(d *Doc) (*Doc, error) {
	c, err := s.export(d, true)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// analyseIndexed is the keyword analysis of an indexed doc.
func (s *state) analyseIndexed(d *Doc) (analysed, error) {
	f, err := s.full(d)
	if err != nil {
		return analysed{}, err
	}
	return analyse(s.analyzer, f), nil
}

// readDoc reads d's put record back from the doc log. Damage there is
// ErrNeedsRebuild, like damage found on Open.
func (s *state) readDoc(d *Doc) (Doc, error) {
	p, err := doclog.ReadPut(s.rd, d.off) // off > 0: there is a log
	var got Doc
	if err == nil {
		got, _, err = decodePut(p)
	}
	if err == nil && got.ID != d.ID {
		err = fmt.Errorf("the record holds %q, not %q", got.ID, d.ID)
	}
	if err != nil {
		return Doc{}, fmt.Errorf("%w: doc log at %d: %w", ErrNeedsRebuild, d.off, err)
	}
	return got, nil
}

// openReader opens the log at path for readDoc, replacing (and closing)
// the reader s had.
func (s *state) openReader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	if s.rd != nil {
		_ = s.rd.Close()
	}
	s.rd = f
	return nil
}

// appendPut writes d's put record (d as JSON) and returns where it starts.
func appendPut(l *doclog.Log, d *Doc, v []float32) (int64, error) {
	js, err := json.Marshal(d)
	if err != nil {
		return 0, err
	}
	return l.AppendPut(js, v)
}

// decodePut decodes a put record's payload: the doc and its vector.
func decodePut(p []byte) (Doc, []float32, error) {
	var d Doc
	js, v, err := doclog.DecodePut(p)
	if err == nil {
		err = json.Unmarshal(js, &d)
	}
	return d, v, err
}
