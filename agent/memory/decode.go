package memory

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/snowclaw/snowclaw"
)

var (
	// ErrNotMemory: the event is not one of the records this package reads.
	ErrNotMemory = errors.New("memory: not a memory record")
	// ErrDecrypt: the content is encrypted for a conversation this codec's
	// key is not part of (or is corrupt). Callers loading at start skip it.
	ErrDecrypt = snowclaw.ErrDecrypt
	// ErrForged: a private memory neither the agent nor its person wrote
	// (snowclaw.Event.Person): nobody's memory, never read as one.
	ErrForged = snowclaw.ErrForged
)

// Decode reads a record back from a kind 30078 event: the reverse of
// Encode, and lenient about older writers. It accepts the legacy d forms of
// a person's record (64 hex and the 32-hex prefix, completed from the p
// tag), plain JSON person records, and plain-text memory items, taken as
// the summary (docs/events.md#older-forms-still-read). The event's created_at is noted so a
// later Encode of the same d tag is newer.
func (c *Codec) Decode(evt *snowclaw.Event) (Record, error) {
	ns, rest := evt.Namespace, evt.Subject
	d := evt.D
	rec := Record{CreatedAt: int64(evt.CreatedAt)}
	var err error
	switch ns {
	case snowclaw.NamespaceMemoryNpub:
		rec.Npub, err = c.decodeNpub(evt, rest)
	case snowclaw.NamespaceMemoryGroup:
		rec.Group, err = c.decodeGroup(evt, rest)
	case snowclaw.NamespaceMemoryItem:
		rec.Item, rec.Lesson, err = c.decodeItem(evt, rest)
	default:
		return Record{}, fmt.Errorf("%w: kind %d, d %q", ErrNotMemory, evt.Kind, d)
	}
	if err != nil {
		return Record{}, fmt.Errorf("memory %s: %w", d, err)
	}
	c.observe(d, int64(evt.CreatedAt))
	return rec, nil
}

func (c *Codec) decodeNpub(evt *snowclaw.Event, subject string) (*Npub, error) {
	ps := evt.P
	var pk string
	switch {
	case strings.HasPrefix(subject, "npub1") || len(subject) == 64:
		var err error
		if pk, err = snowclaw.ParsePubkey(subject); err != nil {
			return nil, err
		}
	case len(subject) == 32 && isHex(subject):
		// The legacy short form cannot name a key by itself.
		for _, p := range ps {
			if snowclaw.NpubMatches(subject, p) {
				pk = p
			}
		}
		if pk == "" {
			return nil, errors.New("legacy 32-hex d tag without a p tag naming the full pubkey")
		}
	default:
		return nil, fmt.Errorf("%q names no pubkey", subject)
	}
	if len(ps) > 0 && !slices.Contains(ps, pk) {
		return nil, fmt.Errorf("p tag %s does not match the d tag", ShortNpub(ps[0]))
	}
	content, err := c.open(evt, pk)
	if err != nil {
		return nil, err
	}
	var n Npub
	if err := json.Unmarshal([]byte(content), &n); err != nil {
		return nil, fmt.Errorf("person record content: %w", err)
	}
	n.Pubkey = pk
	return &n, nil
}

func (c *Codec) decodeGroup(evt *snowclaw.Event, id string) (*Group, error) {
	if id == "" {
		return nil, errors.New("group record without a group id")
	}
	content, err := c.open(evt, "")
	if err != nil {
		return nil, err
	}
	var g Group
	if err := json.Unmarshal([]byte(content), &g); err != nil {
		return nil, fmt.Errorf("group record content: %w", err)
	}
	g.ID = id
	return &g, nil
}

func (c *Codec) decodeItem(evt *snowclaw.Event, topic string) (*Item, *Lesson, error) {
	tier := evt.Tier
	var subject string
	if tier == snowclaw.TierPrivate {
		var ok bool
		if subject, ok = evt.Person(c.trusted()); !ok {
			return nil, nil, ErrForged
		}
	}
	content, err := c.open(evt, subject)
	if err != nil {
		return nil, nil, err
	}
	body := snowclaw.DecodeMemory(content)
	if !body.HasSummary() {
		return nil, nil, errors.New("memory item has no summary")
	}
	// the nested snowclaw object says the agent wrote it; without one
	// (or with one that is not ours) it is someone else's item
	meta, ours := itemMeta{}, false
	if len(body.Snowclaw) > 0 {
		ours = json.Unmarshal(body.Snowclaw, &meta) == nil && string(body.Snowclaw) != "null"
	}
	created := int64(evt.CreatedAt)
	if meta.Kind == "lesson" || meta.Kind == "" && tier == snowclaw.TierInternal && strings.HasPrefix(topic, "lesson/") {
		l := &Lesson{
			ID:        cmp.Or(meta.ID, strings.TrimPrefix(topic, "lesson/")),
			Text:      body.Summary,
			Source:    cmp.Or(meta.Source, "correction"),
			Subject:   cmp.Or(subject, meta.Subject),
			Enabled:   meta.Enabled == nil || *meta.Enabled,
			Hits:      meta.Hits,
			CreatedAt: cmp.Or(meta.CreatedAt, created),
			UpdatedAt: cmp.Or(meta.UpdatedAt, created),
		}
		switch tier {
		case snowclaw.TierGroup:
			l.Tier, l.Group = tier, evt.Group
		case snowclaw.TierPrivate:
			l.Tier = tier
		case snowclaw.TierPublic:
			return nil, nil, errors.New("a lesson is never public")
		}
		return nil, l, nil
	}
	it := &Item{
		Topic:     topic,
		Text:      body.Summary,
		Detail:    body.Detail,
		Context:   body.Context,
		Source:    cmp.Or(meta.Source, SourceAgent),
		Tier:      tier,
		Subject:   cmp.Or(subject, meta.Subject),
		Author:    meta.Author,
		Hits:      meta.Hits,
		CreatedAt: cmp.Or(meta.CreatedAt, created),
		UpdatedAt: cmp.Or(meta.UpdatedAt, created),
	}
	if !ours {
		it.Author = evt.PubKey // written by someone else, who is its author
	}
	if tier == snowclaw.TierGroup {
		it.Group = evt.Group
	}
	if v := snowclaw.TagValues(evt.Event, snowclaw.TagConfidence); len(v) > 0 {
		it.Confidence, _ = strconv.ParseFloat(v[0], 64)
	}
	if v := snowclaw.TagValues(evt.Event, snowclaw.TagVersion); len(v) > 0 {
		it.Version, _ = strconv.Atoi(v[0])
	}
	if v := snowclaw.TagValues(evt.Event, snowclaw.TagSupersedes); len(v) > 0 {
		// the first is the version replaced; more are merged duplicates
		it.Supersedes, it.Merges = v[0], append([]string(nil), v[1:]...)
	}
	if it.Confidence <= 0 || it.Confidence > 1 {
		it.Confidence = defaultConfidence(it.Source)
	}
	// Items written elsewhere carry no id; the last topic segment is one
	// when it looks like ours, else the id is derived as Remember would.
	last := topic[strings.LastIndex(topic, "/")+1:]
	switch {
	case meta.ID != "":
		it.ID = meta.ID
	case len(last) == 12 && isHex(last):
		it.ID = last
	default:
		it.ID = ItemID(it.Tier, it.Scope(), it.Text)
	}
	return it, nil, nil
}

// open returns the plain content of an event (snowclaw.Open, the one
// NIP-44 rule) as this codec's key reads it; person names whom the
// record is about, for records that carry no p tag.
func (c *Codec) open(evt *snowclaw.Event, person string) (string, error) {
	return snowclaw.Open(evt, c.AgentSecret, c.trusted(), person)
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
