package memsearch

import (
	"context"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// chunkEvent is the unsigned event of a chunk.
func (fx *fileIndexer) chunkEvent(rel string, n int, text string, createdAt int64) *nostr.Event {
	return &nostr.Event{
		PubKey:    fx.agent,
		Kind:      snowclaw.KindAppData,
		CreatedAt: nostr.Timestamp(createdAt),
		Tags:      nostr.Tags{{"d", fileD(rel, n)}, {snowclaw.TagPath, rel}, {snowclaw.TagChunk, strconv.Itoa(n)}},
		Content:   text,
	}
}

// chunkDoc is the search doc of a chunk: the agent's, private tier (the
// agent and its owner), with the file's path words searchable too.
func (fx *fileIndexer) chunkDoc(rec chunkRec, rel string, n int, text string) search.Doc {
	d := fileD(rel, n)
	return search.Doc{
		ID:        rec.ID,
		Kind:      snowclaw.KindAppData,
		Pubkey:    fx.agent,
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
		Source: fx.agent,
		Scope:  fileScope,
	}
}

// pathSuffix makes a file's path words ("rooms/dev-notes.md" → "rooms dev
// notes") findable; fileEvent cuts it off again.
func pathSuffix(rel string) string {
	p := strings.TrimSuffix(rel, path.Ext(rel))
	return "\n" + strings.Join(strings.FieldsFunc(p, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}), " ")
}

// canRead: workspace files are read by the owner and the agent only.
func (fx *fileIndexer) canRead(reader string) bool {
	return reader != "" && (reader == fx.agent || reader == fx.owner)
}

// fileCanRead wraps the relay's read rule: a current file chunk is readable
// by the owner and the agent; an outdated one still in the index (the
// event Query rebuilds from its doc carries snow:hash) by nobody; anything
// else is the relay's business.
func (p *Plugin) fileCanRead(inner func(string, *nostr.Event) bool) func(string, *nostr.Event) bool {
	fx := p.files
	return func(reader string, evt *nostr.Event) bool {
		fx.mu.RLock()
		_, current := fx.byID[evt.ID]
		fx.mu.RUnlock()
		if current {
			return fx.canRead(reader)
		}
		if evt.Kind == snowclaw.KindAppData && evt.PubKey == fx.agent &&
			strings.HasPrefix(evt.Tags.GetD(), FileDPrefix) && evt.Tags.Find(snowclaw.TagHash) != nil {
			return false
		}
		return inner != nil && inner(reader, evt)
	}
}

// fileEvent makes the signed event of a current chunk. Events are
// content-addressed, so a signed one is kept for later hits.
func (p *Plugin) fileEvent(id string) (*nostr.Event, bool) {
	fx := p.files
	fx.mu.RLock()
	ref, ok := fx.byID[id]
	fx.mu.RUnlock()
	if !ok || p.loading.Load() {
		return nil, false
	}
	fx.evMu.Lock()
	evt := fx.events[id]
	fx.evMu.Unlock()
	if evt != nil {
		return cloneEvent(evt), true
	}
	d, ok, err := p.ix.Get(id)
	if err != nil {
		p.log.Error("reading a workspace file chunk back from the index", "path", ref.rel, "chunk", ref.n, "id", id, "err", err)
	}
	if !ok {
		return nil, false
	}
	evt = fx.chunkEvent(ref.rel, ref.n, strings.TrimSuffix(d.Text, pathSuffix(ref.rel)), d.CreatedAt)
	if err := evt.Sign(fx.secret); err != nil || evt.ID != id {
		p.log.Error("making the event of a workspace file chunk", "path", ref.rel, "chunk", ref.n, "id", id, "got", evt.ID, "err", err)
		return nil, false
	}
	fx.evMu.Lock()
	if len(fx.events) >= maxCachedEvents {
		clear(fx.events)
	}
	fx.events[id] = evt
	fx.evMu.Unlock()
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

// fileOverlay is the plugin's view of the event store: the stored events
// plus the file chunks as virtual events, which an ids query returns like
// stored ones (Query loads its hits so). Everything else goes to the store.
type fileOverlay struct {
	eventstore.Store
	p *Plugin
}

func (s fileOverlay) QueryEvents(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	if len(f.IDs) == 0 {
		return s.Store.QueryEvents(ctx, f)
	}
	var stored []string
	var virtual []*nostr.Event
	for _, id := range f.IDs {
		if evt, ok := s.p.fileEvent(id); ok {
			if f.Matches(evt) {
				virtual = append(virtual, evt)
			}
		} else {
			stored = append(stored, id)
		}
	}
	if len(virtual) == 0 {
		return s.Store.QueryEvents(ctx, f)
	}
	var ch chan *nostr.Event
	if len(stored) > 0 {
		sf := f
		sf.IDs = stored
		var err error
		if ch, err = s.Store.QueryEvents(ctx, sf); err != nil {
			return nil, err
		}
	}
	out := make(chan *nostr.Event)
	go func() {
		defer close(out)
		if ch != nil {
			for evt := range ch {
				select {
				case out <- evt:
				case <-ctx.Done():
					for range ch {
					}
					return
				}
			}
		}
		for _, evt := range virtual {
			select {
			case out <- evt:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
