package memsearch

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// decision is the rule for group chat (docs/design.md#search): index with an embedding,
// keep for keyword search only, or leave out.
type decision int

const (
	skip decision = iota
	keywordOnly
	index
)

// Chat kinds that carry conversation (NIP-29 chat, threads, replies).
var chatKinds = map[int]bool{snowclaw.KindChat: true, 11: true, 12: true, 1: true, 1111: true}

// chatDecision: mentions of the agent and substantial group messages are
// indexed; short ones are kept for keywords; reactions, reposts, very
// short messages and the agent's own words are skipped. A kind 1 note
// outside any group is kept for keywords unless it mentions the agent:
// the index embeds the conversations the agent takes part in, not the
// public timeline, where anyone with a fresh key can post at wire speed.
// An embedding and its place in the vector graph cost several times what
// storing the note does (snowbench ingest: with every note embedded the
// relay took about twice the CPU per event of a bare relay), and each
// vector holds a couple of KB of RAM for as long as the note is indexed.
func (p *Plugin) chatDecision(evt *snowclaw.Event) decision {
	if !chatKinds[evt.Kind] || evt.PubKey == p.opts.AgentPubkey {
		return skip
	}
	text := strings.TrimSpace(evt.Content)
	n := utf8.RuneCountInString(text)
	switch {
	case n < 4:
		return skip
	case evt.Names(p.opts.AgentPubkey):
		return index
	case evt.Kind == 1 && evt.Group == "":
		return keywordOnly
	case n >= 40:
		return index
	default:
		return keywordOnly
	}
}

// docOf turns a stored event into a search document, or reports that the
// event is not searchable. Encrypted memories are decrypted with the
// agent key and kept volatile (RAM only).
func (p *Plugin) docOf(evt *snowclaw.Event) (search.Doc, bool) {
	doc := search.Doc{
		ID:        evt.ID,
		Kind:      evt.Kind,
		Pubkey:    evt.PubKey,
		CreatedAt: int64(evt.CreatedAt),
		Tags:      tagMap(evt.Event),
		Tier:      string(evt.Tier),
		Group:     evt.Group,
		Source:    evt.PubKey,
	}
	if evt.Kind != snowclaw.KindAppData {
		if evt.Group == "" && evt.Kind != 1 {
			return doc, false
		}
		switch p.chatDecision(evt) {
		case skip:
			return doc, false
		case keywordOnly:
			doc.KeywordOnly = true
		}
		doc.Text = p.keys.Sanitize(evt.Content).Text
		p.setScope(&doc, evt)
		return doc, true
	}

	switch evt.Namespace {
	case snowclaw.NamespaceMemoryItem:
		doc.Topic = evt.Subject
	case snowclaw.NamespaceMemoryNpub, snowclaw.NamespaceMemoryGroup, snowclaw.NamespaceMemoryOther:
		doc.Topic = strings.TrimPrefix(evt.D, snowclaw.PrefixMemory)
	default:
		return doc, false // config and other apps' data are not memories
	}
	doc.D = evt.D
	content := evt.Content
	if evt.Encrypted {
		// a private memory p-tagged by someone the signature does not
		// back is nobody's: Open refuses it (snowclaw.ErrForged)
		plain, err := snowclaw.Open(evt, p.opts.AgentSecret, p.opts.AgentPubkey, "")
		if evt.GroupSealed && p.opts.OpenGroup != nil {
			plain, err = p.opts.OpenGroup(evt) // the group's key, in RAM only
		}
		if err != nil {
			return doc, false
		}
		content, doc.Volatile = plain, true
	}
	doc.Text = p.keys.Sanitize(memoryText(content, doc.Topic, snowclaw.TagValues(evt.Event, "t"))).Text
	provenance(evt.Event, &doc)
	p.setScope(&doc, evt)
	return doc, doc.Text != ""
}

// setScope files the doc under its scope (scope.go) and keeps a probe of
// that scope for the read rule.
func (p *Plugin) setScope(doc *search.Doc, evt *snowclaw.Event) {
	doc.Scope = scopeOf(evt, doc.Volatile)
	p.remember(doc.Scope, evt.Event)
}

// memoryText is what a memory is searched by: its summary, detail and
// context (JSON content) or its plain content, plus its topic words and t
// tags, which often carry the words a query uses.
func memoryText(content, topic string, ts []string) string {
	m := snowclaw.DecodeMemory(content)
	body := strings.TrimSpace(strings.Join([]string{m.Summary, m.Detail, m.Context}, "\n"))
	if m.IsEmpty() { // a social record (notes, preferences, …): all its words
		var v any
		json.Unmarshal([]byte(content), &v)
		body = strings.Join(jsonStrings(v, nil), "\n")
	}
	extra := strings.NewReplacer("/", " ", "-", " ", "_", " ").Replace(topic)
	return strings.TrimSpace(body + "\n" + extra + " " + strings.Join(ts, " "))
}

// jsonStrings collects the string values (and object keys of maps of
// strings, like preferences) of a decoded JSON value.
func jsonStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = jsonStrings(e, out)
		}
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, k+": "+s)
				continue
			}
			out = jsonStrings(e, out)
		}
	}
	return out
}

func tagMap(evt *nostr.Event) map[string][]string {
	m := make(map[string][]string)
	for _, t := range evt.Tags {
		if len(t) >= 2 {
			m[t[0]] = append(m[t[0]], t[1])
		} else if len(t) == 1 {
			m[t[0]] = append(m[t[0]], "")
		}
	}
	return m
}

// eventOf rebuilds as much of the event as the read rule needs, so that
// visibility can be judged from the index alone.
func eventOf(d search.Doc) *nostr.Event {
	evt := &nostr.Event{ID: d.ID, Kind: d.Kind, PubKey: d.Pubkey, CreatedAt: nostr.Timestamp(d.CreatedAt)}
	for k, vs := range d.Tags {
		for _, v := range vs {
			if v == "" && k != "d" {
				evt.Tags = append(evt.Tags, nostr.Tag{k})
			} else {
				evt.Tags = append(evt.Tags, nostr.Tag{k, v})
			}
		}
	}
	return evt
}

// provenance reads a memory's snow: provenance tags into its doc: the
// source it names (a valid key only), the model, a confidence within
// [0, 1], what it supersedes, its version and whom it was learnt from.
// Local and remote memories read them alike.
func provenance(evt *nostr.Event, doc *search.Doc) {
	if v := snowclaw.TagValues(evt, snowclaw.TagSource); len(v) > 0 {
		if pk, err := snowclaw.ParsePubkey(v[0]); err == nil {
			doc.Source = pk
		}
	}
	if v := snowclaw.TagValues(evt, snowclaw.TagModel); len(v) > 0 {
		doc.Model = v[0]
	}
	if v := snowclaw.TagValues(evt, snowclaw.TagConfidence); len(v) > 0 {
		if c, err := strconv.ParseFloat(v[0], 64); err == nil && c >= 0 && c <= 1 {
			doc.Confidence = c
		}
	}
	doc.Supersedes = snowclaw.TagValues(evt, snowclaw.TagSupersedes)
	if v := snowclaw.TagValues(evt, snowclaw.TagVersion); len(v) > 0 {
		doc.Version, _ = strconv.Atoi(v[0])
	}
	doc.LearntFrom = snowclaw.LearntFrom(evt)
}
