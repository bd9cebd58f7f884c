package workspace

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

func chunkD(rel string, n int) string { return DPrefix + rel + "#" + strconv.Itoa(n) }

// chunkEvent is the unsigned event of a chunk.
func (f *Files) chunkEvent(rel string, n int, text string, createdAt int64) *nostr.Event {
	return &nostr.Event{
		PubKey:    f.agent,
		Kind:      snowclaw.KindAppData,
		CreatedAt: nostr.Timestamp(createdAt),
		Tags:      nostr.Tags{{"d", chunkD(rel, n)}, {snowclaw.TagPath, rel}, {snowclaw.TagChunk, strconv.Itoa(n)}},
		Content:   text,
	}
}

// chunkDoc is the search doc of a chunk: the agent's, private tier (the
// agent and its owner), with the file's path words searchable too.
func (f *Files) chunkDoc(rec chunkRec, rel string, n int, text string) search.Doc {
	d := chunkD(rel, n)
	return search.Doc{
		ID:        rec.ID,
		Kind:      snowclaw.KindAppData,
		Pubkey:    f.agent,
		CreatedAt: rec.CreatedAt,
		D:         d,
		Text:      text + pathSuffix(rel),
		Tags: map[string][]string{
			"d":               {d},
			snowclaw.TagPath:  {rel},
			snowclaw.TagChunk: {strconv.Itoa(n)},
			snowclaw.TagHash:  {rec.Hash},
		},
		Tier:   string(snowclaw.TierPrivate),
		Source: f.agent,
		Scope:  Scope,
	}
}

// pathSuffix makes a file's path words ("rooms/dev-notes.md" → "rooms dev
// notes") findable; event cuts it off again.
func pathSuffix(rel string) string {
	p := strings.TrimSuffix(rel, path.Ext(rel))
	return "\n" + strings.Join(strings.FieldsFunc(p, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}), " ")
}

// CanRead is the read rule of the chunks' scope (Scope): workspace files
// are read by the owner and the agent only.
func (f *Files) CanRead(reader string) bool {
	return reader != "" && (reader == f.agent || reader == f.owner)
}

// ReadRule wraps the relay's read rule (inner) for the index: a current
// file chunk is readable by the owner and the agent; an outdated one still
// in the index (the event the index rebuilds from its doc carries
// snow:hash) by nobody; anything else is the relay's business.
func (f *Files) ReadRule(inner func(string, *nostr.Event) bool) func(string, *nostr.Event) bool {
	return func(reader string, evt *nostr.Event) bool {
		f.mu.RLock()
		_, current := f.byID[evt.ID]
		f.mu.RUnlock()
		if current {
			return f.CanRead(reader)
		}
		if evt.Kind == snowclaw.KindAppData && evt.PubKey == f.agent &&
			strings.HasPrefix(evt.Tags.GetD(), DPrefix) && evt.Tags.Find(snowclaw.TagHash) != nil {
			return false
		}
		return inner != nil && inner(reader, evt)
	}
}

// event makes the signed event of a current chunk. Events are
// content-addressed, so a signed one is kept for later hits. Before Start
// no chunk is current.
func (f *Files) event(id string) (*nostr.Event, bool) {
	f.mu.RLock()
	ref, ok := f.byID[id]
	f.mu.RUnlock()
	if !ok {
		return nil, false
	}
	f.evMu.Lock()
	evt := f.events[id]
	f.evMu.Unlock()
	if evt != nil {
		return cloneEvent(evt), true
	}
	d, ok, err := f.ix.Get(id)
	if err != nil {
		f.log.Error("reading a workspace file chunk back from the index", "path", ref.rel, "chunk", ref.n, "id", id, "err", err)
	}
	if !ok {
		return nil, false
	}
	evt = f.chunkEvent(ref.rel, ref.n, strings.TrimSuffix(d.Text, pathSuffix(ref.rel)), d.CreatedAt)
	if err := evt.Sign(f.secret); err != nil || evt.ID != id {
		f.log.Error("making the event of a workspace file chunk", "path", ref.rel, "chunk", ref.n, "id", id, "got", evt.ID, "err", err)
		return nil, false
	}
	f.evMu.Lock()
	if len(f.events) >= maxCachedEvents {
		clear(f.events)
	}
	f.events[id] = evt
	f.evMu.Unlock()
	return cloneEvent(evt), true
}

func cloneEvent(evt *nostr.Event) *nostr.Event {
	c := *evt
	c.Tags = make(nostr.Tags, len(evt.Tags))
	for i, t := range evt.Tags {
		c.Tags[i] = slices.Clone(t)
	}
	return &c
}
