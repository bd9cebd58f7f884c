package memsearch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// Decrypted private memories are indexed in RAM only, so an index read
// back whole after a restart (search.Index.Restored) lacks them. Rather
// than walk every stored event to find the encrypted ones before the
// index may answer, Close writes the ids of the docs it held in RAM
// (event ids, which the store holds anyway; never a word of their text),
// and the next load reads just those events back, opens them and indexes
// them again. The file is read once: an index that is not restored
// ignores it and finds them by walking the store.
const reopenFile = "reopen.ids"

// saveReopen writes the ids of the volatile docs for the next load. A
// failure costs only time: the walk of the store after the load finds
// them, but until then they would be missing, so it is logged.
func (p *Plugin) saveReopen() {
	if p.opts.Search.Dir == "" {
		return
	}
	ids := p.ix.VolatileIDs()
	path := filepath.Join(p.opts.Search.Dir, reopenFile)
	tmp := path + ".tmp"
	err := os.WriteFile(tmp, []byte(strings.Join(ids, "\n")), 0o600)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		p.log.Warn("recording the private memories to open again at the next start", "err", err)
	}
}

// reopen indexes again, after a restored open, the volatile docs the
// index held when it closed.
func (p *Plugin) reopen(ctx context.Context) error {
	path := filepath.Join(p.opts.Search.Dir, reopenFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", reopenFile, err)
	}
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := sc.Text(); nostr.IsValid32ByteHex(id) {
			ids = append(ids, id)
		}
	}
	f.Close()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", reopenFile, err)
	}
	_ = os.Remove(path) // read: the index moves on from here
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		ch, err := p.opts.Store.QueryEvents(ctx, nostr.Filter{IDs: chunk, Limit: len(chunk)})
		if err != nil {
			return fmt.Errorf("reading private memories back: %w", err)
		}
		var docs []search.Doc
		for evt := range ch {
			if doc, ok := p.docOf(snowclaw.ReadEvent(evt)); ok && doc.Volatile {
				docs = append(docs, doc)
			}
		}
		if err := p.ix.Index(ctx, docs...); err != nil {
			return fmt.Errorf("indexing private memories: %w", err)
		}
	}
	return nil
}

// dropReopen removes the ids of an index that was not restored: its
// walk of the store finds the private memories.
func (p *Plugin) dropReopen() {
	_ = os.Remove(filepath.Join(p.opts.Search.Dir, reopenFile))
}

// probesFromIndex learns a probe of every scope the index holds from one
// of its docs, as the read rule judges a scope (scope.go): after a
// restored open no event of the store has been read yet.
func (p *Plugin) probesFromIndex() {
	p.ix.EachScope(func(scope string, d search.Doc) {
		p.remember(scope, eventOf(d))
	})
}
