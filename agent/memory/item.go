package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/snowclaw/snowclaw"
)

// Item sources, in increasing authority (docs/agent.md#learning-when-told).
const (
	SourceAgent    = "agent"         // the agent decided this was worth keeping
	SourceExplicit = "explicit_user" // someone said "remember …"
	SourceOwner    = "owner"         // the owner said so
)

// Size caps keep an encoded item well inside the relay's 64 KiB content
// limit even after NIP-44 padding and base64.
const (
	maxTextBytes   = 4 * 1024
	maxDetailBytes = 24 * 1024
)

// Item is a long-term memory, stored as a memory event (d tag
// snow:memory:<Topic>; docs/events.md#memory-items-snowmemorytopic).
type Item struct {
	ID      string `json:"id"`
	Topic   string `json:"topic"` // d tag after "snow:memory:"; unique per item (ends in ID)
	Text    string `json:"text"`  // the summary
	Detail  string `json:"detail,omitempty"`
	Context string `json:"context,omitempty"` // where/why it was remembered, free text; searched too
	Source  string `json:"source"`            // SourceAgent, SourceExplicit, SourceOwner

	Tier    snowclaw.Tier `json:"tier"`
	Group   string        `json:"group,omitempty"`   // group id, group tier only
	Subject string        `json:"subject,omitempty"` // hex pubkey the memory is about; private tier: who may read it
	Author  string        `json:"author,omitempty"`  // hex pubkey of whoever asked for it

	Confidence float64 `json:"confidence"`
	CreatedAt  int64   `json:"created_at"`
	UpdatedAt  int64   `json:"updated_at"`
	Hits       int     `json:"hits"`

	// Version counts the corrections and promotions behind this item (1 or
	// 0 for the first); Supersedes is the event id of the version it
	// replaced. The old version stays on the relay as history.
	Version    int    `json:"version,omitempty"`
	Supersedes string `json:"supersedes,omitempty"`
	// Merges are the event ids of duplicates folded into this item by
	// compaction: named by snow:supersedes too, they stay on the relay as
	// history and leave search and the prompt.
	Merges []string `json:"merges,omitempty"`
}

// Scope is what, beside the tier, decides who may see the item: the group
// for group memories, the person for private ones, nothing otherwise.
func (it Item) Scope() string {
	switch it.Tier {
	case snowclaw.TierGroup:
		return it.Group
	case snowclaw.TierPrivate:
		return it.Subject
	}
	return ""
}

// Valid reports why an item cannot be stored or encoded: without its scope
// a group or private memory would have to be widened to be written.
func (it Item) Valid() error {
	if strings.TrimSpace(it.Text) == "" {
		return errors.New("memory item has no text")
	}
	switch it.Tier {
	case snowclaw.TierPublic, snowclaw.TierInternal:
	case snowclaw.TierGroup:
		if it.Group == "" {
			return errors.New("group memory item has no group")
		}
	case snowclaw.TierPrivate:
		if _, err := snowclaw.ParsePubkey(it.Subject); err != nil {
			return fmt.Errorf("private memory item needs the person's pubkey: %w", err)
		}
	default:
		return fmt.Errorf("memory item has unknown tier %q", it.Tier)
	}
	return nil
}

// ArchiveTopic is where the agent's archive records live (agent/archive.go):
// internal items whose snow:supersedes names the memories a per-scope cap
// archived. Deleting one would bring those back, so no cap removes it.
const ArchiveTopic = "agent/archive"

// IsArchive reports an archive record.
func (it Item) IsArchive() bool {
	return it.Tier == snowclaw.TierInternal && strings.HasPrefix(it.Topic, ArchiveTopic+"/")
}

// maxForeignTopic bounds a topic taken from another author's d tag.
const maxForeignTopic = 200

// MayAnswerAt reports whether the agent may write a memory at exactly
// topic, another author's (RememberAt): a plain topic outside the agent's
// own namespaces — lessons, its archive and notes, and summaries, whose
// topic says what they cover.
func MayAnswerAt(topic string) bool {
	if topic == "" || len(topic) > maxForeignTopic || strings.ContainsAny(topic, "\n\r\t") ||
		topic != strings.Trim(topic, "/ ") || strings.Contains(topic, "/summary/") {
		return false
	}
	return !strings.HasPrefix(topic, "lesson/") && !strings.HasPrefix(topic, "agent/")
}

// DefaultTopic is where an item lives when its writer named no topic
// (docs/events.md): a person's notes, a group's facts, general facts, or the
// agent's own notes. It ends in the id so that every item has its own d tag:
// two items sharing a d tag would overwrite each other on the relay.
func DefaultTopic(it Item) string {
	switch it.Tier {
	case snowclaw.TierPrivate:
		return "user/" + snowclaw.NpubOf(it.Subject) + "/notes/" + it.ID
	case snowclaw.TierGroup:
		return "group/" + it.Group + "/facts/" + it.ID
	case snowclaw.TierInternal:
		return "agent/notes/" + it.ID
	}
	return "fact/general/" + it.ID
}

// Lesson is a self-improvement lesson (docs/agent.md#learning-when-told): learned from corrections
// and failures, shown to the model while enabled.
//
// A lesson is made of someone's words, so it keeps the tier and scope of
// the place they were said, like any memory: a correction in a private
// conversation with P is a private lesson of P's (Subject P), shown only
// when answering P in private; one said in group G is G's (Group G), shown
// only in G. Only the internal tier is global: the owner's lessons and the
// agent's own failures.
type Lesson struct {
	ID        string        `json:"id"`
	Text      string        `json:"text"`
	Source    string        `json:"source"`            // "correction", "llm_failure", "owner"
	Tier      snowclaw.Tier `json:"tier,omitempty"`    // "" means internal
	Group     string        `json:"group,omitempty"`   // group tier: where it was said
	Subject   string        `json:"subject,omitempty"` // hex pubkey whose words taught it; private tier: its only reader
	Enabled   bool          `json:"enabled"`
	Hits      int           `json:"hits"`
	CreatedAt int64         `json:"created_at"`
	UpdatedAt int64         `json:"updated_at"`
}

// LessonTier is the lesson's tier, internal when unset.
func (l Lesson) LessonTier() snowclaw.Tier {
	if l.Tier == "" {
		return snowclaw.TierInternal
	}
	return l.Tier
}

// Scope is the group of a group lesson and the person of a private one.
func (l Lesson) Scope() string {
	return Item{Tier: l.LessonTier(), Group: l.Group, Subject: l.Subject}.Scope()
}

// Valid reports why a lesson cannot be kept: a scoped lesson without its
// scope would have to be widened to be stored or shown. Lessons are never
// public: a public one would be the words of someone shown everywhere.
func (l Lesson) Valid() error {
	if strings.TrimSpace(l.Text) == "" {
		return errors.New("lesson has no text")
	}
	switch l.LessonTier() {
	case snowclaw.TierInternal, snowclaw.TierGroup, snowclaw.TierPrivate:
		return Item{Text: l.Text, Tier: l.LessonTier(), Group: l.Group, Subject: l.Subject}.Valid()
	}
	return fmt.Errorf("lesson has tier %q: want internal, group or private", l.Tier)
}

// Unscoped reports a lesson stored before lessons had a scope
// (docs/agent.md#learning-when-told):
// a correction with no tier and no person recorded. Whose words it holds
// is unknown, so it cannot be shown anywhere safely; the store drops it
// on load and deletes its event.
func (l Lesson) Unscoped() bool {
	return l.Source == "correction" && l.LessonTier() == snowclaw.TierInternal && l.Subject == ""
}

// LessonTopic is the topic of a lesson's event.
func LessonTopic(id string) string { return "lesson/" + id }

// LessonID is the id of a lesson: derived from its text, and for a scoped
// lesson from its scope too, so the same words said in two groups are two
// lessons (each erased with its own). Global lessons keep the id they
// always had.
func LessonID(l Lesson) string {
	if l.LessonTier() == snowclaw.TierInternal {
		return ItemID(snowclaw.TierInternal, "lesson", l.Text)
	}
	return ItemID(l.LessonTier(), "lesson|"+l.Scope(), l.Text)
}

// Normalize is the dedupe key of a text: lowercase, punctuation removed,
// whitespace collapsed. "Likes tea!" and "likes  tea" are the same fact.
// Apostrophes vanish ("don't" → "dont") but other punctuation separates
// words, so "tea,coffee" still yields the words tea and coffee for Recall.
func Normalize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '\'' || r == '’' || r == 'ʼ':
			continue
		case unicode.IsPunct(r) || unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ItemID is the first 12 hex digits of sha256(tier|scope|Normalize(text)):
// the same fact remembered again in the same scope gets the same id and is
// merged, while the same words in another group or for another person stay
// a separate memory.
func ItemID(tier snowclaw.Tier, scope, text string) string {
	sum := sha256.Sum256([]byte(string(tier) + "|" + scope + "|" + Normalize(text)))
	return hex.EncodeToString(sum[:])[:12]
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// sourceRank orders sources by authority, so a merge never downgrades an
// owner's memory to an agent guess.
func sourceRank(s string) int {
	switch s {
	case SourceOwner:
		return 2
	case SourceExplicit:
		return 1
	}
	return 0
}

// defaultConfidence is the confidence of an item whose writer gave none:
// what people state outright is trusted more than what the agent inferred.
func defaultConfidence(source string) float64 {
	switch source {
	case SourceOwner:
		return 0.95
	case SourceExplicit:
		return 0.9
	}
	return 0.7
}
