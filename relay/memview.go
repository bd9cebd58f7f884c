package relay

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// viewer turns memory item events into what one reader sees of them
// (snowclaw.MemoryView). Whether the reader may have the event at all is
// the read rule's decision, made before; the viewer only decides whether
// the reader also gets the plaintext of an encrypted one. Decrypted text
// lives in the returned views only: it is never logged or stored.
type viewer struct {
	reader string
	owner  string
	agent  string        // hex; whose a private memory is depends on it
	codec  *memory.Codec // nil: the agent key is unusable, nothing is decrypted
}

// viewerFor makes a viewer for one call. The codec is made per call
// because Decode remembers every d tag it sees, which a long-lived one
// would accumulate without bound.
func (r *Relay) viewerFor(reader string) *viewer {
	v := &viewer{reader: reader, owner: r.ids.Owner, agent: r.ids.Agent}
	if c, err := memory.NewCodec(r.opts.Keys.AgentSecret); err == nil {
		v.codec = c
	}
	return v
}

// isMemory reports whether evt is a memory item (kind 30078, d
// snow:memory:<topic>).
func isMemory(evt *nostr.Event) bool {
	ns, _ := snowclaw.NamespaceOf(evt)
	return ns == snowclaw.NamespaceMemoryItem
}

// mayDecrypt is the plaintext rule: a private memory's text is its
// person's (snowclaw.PersonOf: the p tag of an event signed by the agent or
// that person), an internal one the owner's. The agent holds the other end
// of every such conversation, so it can decrypt for them.
func (v *viewer) mayDecrypt(evt *nostr.Event) bool {
	if v.reader == "" || v.codec == nil {
		return false
	}
	switch snowclaw.TierOf(evt) {
	case snowclaw.TierPrivate:
		person, ok := snowclaw.PersonOf(evt, v.agent)
		return ok && person == v.reader
	case snowclaw.TierInternal:
		return v.owner != "" && v.reader == v.owner
	}
	return false
}

// view decodes the markers and, when the reader may read it, the text.
func (v *viewer) view(evt *nostr.Event) snowclaw.MemoryView {
	_, topic := snowclaw.NamespaceOf(evt)
	mv := snowclaw.MemoryView{
		ID:         evt.ID,
		Pubkey:     evt.PubKey,
		Topic:      topic,
		Tier:       snowclaw.TierOf(evt),
		Group:      snowclaw.GroupOf(evt),
		Tags:       snowclaw.TagValues(evt, "t"),
		Source:     snowclaw.NpubOf(firstTag(evt, "snow:source", evt.PubKey)),
		Model:      firstTag(evt, "snow:model", ""),
		Supersedes: snowclaw.TagValues(evt, "snow:supersedes"),
		CreatedAt:  evt.CreatedAt,
	}
	if mv.Tier == snowclaw.TierPrivate {
		mv.Person, _ = snowclaw.PersonOf(evt, v.agent)
	}
	if c, err := strconv.ParseFloat(firstTag(evt, "snow:confidence", ""), 64); err == nil && c >= 0 && c <= 1 {
		mv.Confidence = c
	}
	if n, err := strconv.Atoi(firstTag(evt, "snow:version", "")); err == nil && n > 0 {
		mv.Version = n
	}
	switch {
	case !snowclaw.IsEncrypted(evt):
		mv.Text, mv.Detail, mv.Context = plainContent(evt.Content)
	case v.mayDecrypt(evt):
		mv.Text, mv.Detail, mv.Context = v.decrypt(evt)
		mv.Encrypted = mv.Text == "" // could not be opened after all
	default:
		mv.Encrypted = true
	}
	return mv
}

// decrypt opens an encrypted memory with the agent key: the agent's own
// items (to a person or to itself) and those people encrypted to the agent.
func (v *viewer) decrypt(evt *nostr.Event) (text, detail, context string) {
	rec, err := v.codec.Decode(evt)
	switch {
	case err != nil:
		return "", "", ""
	case rec.Item != nil:
		return rec.Item.Text, rec.Item.Detail, rec.Item.Context
	case rec.Lesson != nil:
		return rec.Lesson.Text, "", ""
	}
	return "", "", ""
}

// plainContent reads seed 003's JSON content, or plain text taken as the
// summary (DESIGN.md §2). A JSON object with only a detail shows the
// detail as its summary, as the agent reads it.
func plainContent(content string) (text, detail, context string) {
	trimmed := strings.TrimSpace(content)
	if strings.HasPrefix(trimmed, "{") {
		var body struct {
			Summary string `json:"summary"`
			Detail  string `json:"detail"`
			Context string `json:"context"`
		}
		if json.Unmarshal([]byte(trimmed), &body) == nil {
			if body.Summary == "" {
				body.Summary, body.Detail = body.Detail, ""
			}
			return body.Summary, body.Detail, body.Context
		}
	}
	return trimmed, "", ""
}

func firstTag(evt *nostr.Event, key, fallback string) string {
	if v := snowclaw.TagValues(evt, key); len(v) > 0 && v[0] != "" {
		return v[0]
	}
	return fallback
}
