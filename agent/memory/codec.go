package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// MaxContentBytes is the relay's default content limit; Encode refuses to
// build an event the relay would refuse anyway.
const MaxContentBytes = 64 * 1024

// Codec turns records into unsigned kind 30078 events of the agent and back.
// The caller signs what Encode returns with the agent key.
//
// A Codec holding a person's key instead of the agent's decodes the records
// the agent keeps about that person: decryption always pairs the holder's
// secret with the other side of the conversation. A Codec is safe for
// concurrent use once its exported fields are set; do not copy it.
type Codec struct {
	AgentSecret string // hex
	AgentPubkey string // hex
	// TrustAgent is the agent whose signature makes a private memory its
	// p person's (snowclaw.Event.Person); "" means AgentPubkey, which is
	// right whenever the codec holds the agent key. A codec holding a
	// person's key sets it to the agent's pubkey.
	TrustAgent string
	Model      string           // optional snow:model tag on memory items
	Now        func() time.Time // nil: time.Now

	mu   sync.Mutex
	last map[string]int64 // newest created_at used or seen per d tag
}

// NewCodec makes a codec for the agent key (hex or nsec).
func NewCodec(secret string) (*Codec, error) {
	sk, err := snowclaw.ParseSecret(secret)
	if err != nil {
		return nil, fmt.Errorf("memory codec: %w", err)
	}
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		return nil, fmt.Errorf("memory codec: %w", err)
	}
	return &Codec{AgentSecret: sk, AgentPubkey: pk}, nil
}

// itemBody is the content of one of the agent's items or lessons: the
// shared memory content (snowclaw.MemoryContent, which the search index
// and every view read) with what only the agent needs back nested in its
// snowclaw object, out of the searched text.
func itemBody(summary, detail, context string, meta itemMeta) (snowclaw.MemoryContent, error) {
	raw, err := json.Marshal(meta)
	return snowclaw.MemoryContent{Summary: summary, Detail: detail, Context: context, Snowclaw: raw}, err
}

type itemMeta struct {
	Kind      string `json:"kind,omitempty"` // "item" or "lesson"
	ID        string `json:"id,omitempty"`
	Source    string `json:"source,omitempty"`
	Author    string `json:"author,omitempty"`
	Subject   string `json:"subject,omitempty"`
	Hits      int    `json:"hits"`
	Enabled   *bool  `json:"enabled,omitempty"`
	CreatedAt int64  `json:"created_at,omitempty"`
	UpdatedAt int64  `json:"updated_at,omitempty"`
}

// Encode builds the unsigned event of a record (exactly one kind set).
// created_at is r.CreatedAt or now, but always later than any version this
// codec has encoded or decoded for the same d tag: two flushes in one second
// would otherwise tie, and a tie on an addressable event is won by the
// lower id, not by the newer content.
func (c *Codec) Encode(r Record) (nostr.Event, error) {
	if r.count() != 1 {
		return nostr.Event{}, errors.New("memory: a record must hold exactly one of npub, group, item, lesson")
	}
	var (
		evt nostr.Event
		err error
	)
	switch {
	case r.Npub != nil:
		evt, err = c.encodeNpub(r.Npub)
	case r.Group != nil:
		evt, err = c.encodeGroup(r.Group)
	case r.Item != nil:
		evt, err = c.encodeItem(r.Item)
	default:
		evt, err = c.encodeLesson(r.Lesson)
	}
	if err != nil {
		return nostr.Event{}, err
	}
	if len(evt.Content) > MaxContentBytes {
		return nostr.Event{}, fmt.Errorf("memory %s: content is %d bytes, over the %d the relay accepts", evt.Tags.GetD(), len(evt.Content), MaxContentBytes)
	}
	evt.Kind = snowclaw.KindAppData
	evt.PubKey = c.AgentPubkey
	evt.CreatedAt = nostr.Timestamp(c.stamp(evt.Tags.GetD(), r.CreatedAt))
	return evt, nil
}

// encodeNpub writes a person's record private between the agent and that
// person: the person may read what the agent keeps about them, nobody else.
func (c *Codec) encodeNpub(n *Npub) (nostr.Event, error) {
	pk, err := snowclaw.ParsePubkey(n.Pubkey)
	if err != nil {
		return nostr.Event{}, fmt.Errorf("memory npub record: %w", err)
	}
	npub := snowclaw.NpubOf(pk)
	plain, err := json.Marshal(n)
	if err != nil {
		return nostr.Event{}, err
	}
	content, err := c.encrypt(pk, string(plain))
	if err != nil {
		return nostr.Event{}, err
	}
	return nostr.Event{Content: content, Tags: nostr.Tags{
		{"d", snowclaw.PrefixMemoryNpub + npub},
		{"p", pk},
		{"encrypted", "nip44"},
		{snowclaw.TagTier, string(snowclaw.TierPrivate)},
	}}, nil
}

func (c *Codec) encodeGroup(g *Group) (nostr.Event, error) {
	if g.ID == "" {
		return nostr.Event{}, errors.New("memory group record has no id")
	}
	plain, err := json.Marshal(g)
	if err != nil {
		return nostr.Event{}, err
	}
	return nostr.Event{Content: string(plain), Tags: nostr.Tags{
		{"d", snowclaw.PrefixMemoryGroup + g.ID},
		{"h", g.ID},
		{snowclaw.TagTier, string(snowclaw.TierGroup)},
	}}, nil
}

func (c *Codec) encodeItem(it *Item) (nostr.Event, error) {
	if err := it.Valid(); err != nil {
		return nostr.Event{}, err
	}
	if it.Topic == "" || it.ID == "" {
		return nostr.Event{}, errors.New("memory item has no id or topic; store it with Remember first")
	}
	subject := it.Subject
	if pk, err := snowclaw.ParsePubkey(subject); err == nil {
		subject = pk // the p tag and the conversation key need hex
	}
	body, err := itemBody(it.Text, it.Detail, it.Context, itemMeta{
		Kind: "item", ID: it.ID, Source: it.Source, Author: it.Author, Subject: subject,
		Hits: it.Hits, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
	})
	if err != nil {
		return nostr.Event{}, err
	}
	evt, err := c.memoryEvent(it.Topic, it.Tier, it.Group, subject, it.Confidence, body)
	if err != nil {
		return evt, err
	}
	// whom it was learnt from, for the conflict dashboard; a public
	// memory does not name the person to everyone
	if pk, err := snowclaw.ParsePubkey(it.Author); err == nil && it.Tier != snowclaw.TierPublic {
		evt.Tags = append(evt.Tags, nostr.Tag{snowclaw.TagLearntFrom, pk})
	}
	if it.Version > 1 {
		evt.Tags = append(evt.Tags, nostr.Tag{snowclaw.TagVersion, strconv.Itoa(it.Version)})
	}
	if it.Supersedes != "" {
		evt.Tags = append(evt.Tags, nostr.Tag{snowclaw.TagSupersedes, it.Supersedes})
	}
	for _, id := range it.Merges {
		evt.Tags = append(evt.Tags, nostr.Tag{snowclaw.TagSupersedes, id})
	}
	return evt, nil
}

func (c *Codec) encodeLesson(l *Lesson) (nostr.Event, error) {
	if l.ID == "" {
		return nostr.Event{}, errors.New("lesson has no id")
	}
	if err := l.Valid(); err != nil {
		return nostr.Event{}, err
	}
	subject := l.Subject
	if pk, err := snowclaw.ParsePubkey(subject); err == nil {
		subject = pk
	}
	on := l.Enabled
	body, err := itemBody(l.Text, "", "", itemMeta{
		Kind: "lesson", ID: l.ID, Source: l.Source, Subject: subject, Hits: l.Hits, Enabled: &on,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
	})
	if err != nil {
		return nostr.Event{}, err
	}
	// the lesson's tier and scope are its event's markers, so the relay
	// serves it only where its words may be read (a private one is
	// encrypted between the agent and its person)
	return c.memoryEvent(LessonTopic(l.ID), l.LessonTier(), l.Group, subject, 1, body)
}

// memoryEvent builds a memory event with the tier markers the
// relay enforces (docs/events.md): h for group, p plus encryption for
// private, encryption to the agent itself for internal.
func (c *Codec) memoryEvent(topic string, tier snowclaw.Tier, group, subject string, confidence float64, body snowclaw.MemoryContent) (nostr.Event, error) {
	content, err := body.Encode()
	if err != nil {
		return nostr.Event{}, err
	}
	source := snowclaw.NpubOf(c.AgentPubkey)
	tags := nostr.Tags{
		{"d", snowclaw.PrefixMemoryItem + topic},
		{snowclaw.TagTier, string(tier)},
		{snowclaw.TagConfidence, strconv.FormatFloat(min(max(confidence, 0), 1), 'f', 2, 64)},
		{snowclaw.TagSource, source},
	}
	if c.Model != "" {
		tags = append(tags, nostr.Tag{snowclaw.TagModel, c.Model})
	}
	if t, _, _ := strings.Cut(topic, "/"); t != "" {
		tags = append(tags, nostr.Tag{"t", t})
	}
	tags = append(tags, TierMarkers(tier, group, subject)...)
	switch tier {
	case snowclaw.TierPrivate:
		content, err = c.encrypt(subject, content)
	case snowclaw.TierInternal:
		content, err = c.encrypt(c.AgentPubkey, content)
	}
	if err != nil {
		return nostr.Event{}, err
	}
	return nostr.Event{Content: content, Tags: tags}, nil
}

// TierMarkers are the tags that put a memory in its tier (docs/events.md):
// h for group, p plus encryption for private, encryption alone for
// internal. They are what the relay's read rule judges, so the agent asks
// that rule about an item it holds in RAM by these markers (Probe).
func TierMarkers(tier snowclaw.Tier, group, subject string) nostr.Tags {
	switch tier {
	case snowclaw.TierGroup:
		return nostr.Tags{{"h", group}}
	case snowclaw.TierPrivate:
		return nostr.Tags{{"p", subject}, {"encrypted", "nip44"}}
	case snowclaw.TierInternal:
		return nostr.Tags{{"encrypted", "nip44"}}
	}
	return nil
}

// Probe is a content-free stand-in for the event of a memory in tier,
// written by author (the agent): what the read rule needs to judge who
// may read it.
func Probe(author string, tier snowclaw.Tier, group, subject string) *nostr.Event {
	tags := append(nostr.Tags{{"d", snowclaw.PrefixMemoryItem + "probe"}}, TierMarkers(tier, group, subject)...)
	return &nostr.Event{Kind: snowclaw.KindAppData, PubKey: author, Tags: tags}
}

// trusted is the agent key snowclaw.Event.Person trusts (see TrustAgent).
func (c *Codec) trusted() string {
	if c.TrustAgent != "" {
		return c.TrustAgent
	}
	return c.AgentPubkey
}

// encrypt seals plain between the codec's key and peer (snowclaw.Seal);
// with peer = the codec's own key only it can read it.
func (c *Codec) encrypt(peer, plain string) (string, error) {
	out, err := snowclaw.Seal(plain, c.AgentSecret, peer)
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	return out, nil
}

// stamp picks the created_at for d (see Encode).
func (c *Codec) stamp(d string, want int64) int64 {
	if want == 0 {
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		want = now().Unix()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]int64{}
	}
	if last, ok := c.last[d]; ok && want <= last {
		want = last + 1
	}
	c.last[d] = want
	return want
}

// observe remembers a stored version's created_at, so the next Encode of the
// same d tag is newer than it.
func (c *Codec) observe(d string, at int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]int64{}
	}
	c.last[d] = max(c.last[d], at)
}
