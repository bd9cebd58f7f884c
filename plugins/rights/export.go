package rights

import (
	"cmp"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// ExportVersion is the version of the export format (docs/privacy.md).
const ExportVersion = "1.0"

// Export categories (docs/privacy.md#export-forget-and-destroy): four
// kinds of memory, plus the agent's record of the person.
const (
	CategoryConversation   = "conversation"
	CategoryPreference     = "preference"
	CategoryLearnedContext = "learned_context"
	CategoryWorkPattern    = "work_pattern"
	CategoryProfile        = "profile"
)

// ExportRecord is one piece of data about the person. MemoryID is the event
// id whenever the record is stored as an event, so the person can pass it
// straight to "forget id …".
type ExportRecord struct {
	MemoryID  string    `json:"memory_id"`
	Content   string    `json:"content"`
	Tier      string    `json:"tier,omitempty"`
	Topic     string    `json:"topic,omitempty"`
	Group     string    `json:"group,omitempty"`
	TopicTags []string  `json:"topic_tags,omitempty"`
	Source    string    `json:"source,omitempty"`
	Kind      int       `json:"kind,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Category holds the records of one category, oldest first.
type Category struct {
	Count   int            `json:"count"`
	Records []ExportRecord `json:"records"`
}

// Export is the export document (the rights of access and portability,
// docs/privacy.md#export-forget-and-destroy). Build it with NewExport and the Add methods, which keep the
// counts right, merge duplicates and keep records sorted; then marshal it
// as JSON or render it with Markdown. It is not safe for concurrent use.
//
// Who may see what is the caller's decision (docs/access.md). As a last line
// of defence the Add methods refuse data the tier rules keep from this
// person: someone else's record or private memories, and encrypted events
// neither written by nor addressed to them.
type Export struct {
	ExportVersion string               `json:"export_version"`
	UserID        string               `json:"user_id"` // npub
	ExportedAt    time.Time            `json:"exported_at"`
	RecordCount   int                  `json:"record_count"`
	Categories    map[string]*Category `json:"categories"`

	// Agent is the agent's pubkey (hex): a private memory it signed for
	// this person is theirs (snowclaw.Event.Person). "" trusts only what the
	// person wrote themselves.
	Agent string `json:"-"`

	pubkey  string            // hex of UserID; "" refuses all scoped data
	alias   map[string]string // "id:<memory id>" or "addr:<d tag>" → memory id of the record
	where   map[string]string // memory id → its category
	rank    map[string]int    // memory id → authority of what it was built from
	covered map[string]bool   // d tags already exported in another form (the npub record)
}

// Authority of a record's origin: the agent's decoded memory is fresher
// than a stored event (it may hold changes not yet flushed), so it wins a
// merge and the event only fills gaps.
const (
	rankEvent = 1
	rankAgent = 2
)

// NewExport starts an empty export for a person (npub or hex), dated now.
func NewExport(npub string, now time.Time) *Export {
	x := &Export{
		ExportVersion: ExportVersion,
		UserID:        npub,
		ExportedAt:    now.UTC().Round(0),
		Categories:    map[string]*Category{},
		alias:         map[string]string{},
		where:         map[string]string{},
		rank:          map[string]int{},
		covered:       map[string]bool{},
	}
	if pk, err := snowclaw.ParsePubkey(npub); err == nil {
		x.pubkey = pk
		x.UserID = snowclaw.NpubOf(pk)
	}
	// Empty categories still appear, as [] rather than null: an importer
	// can tell "nothing of this kind" from "not exported".
	for _, c := range []string{CategoryConversation, CategoryPreference, CategoryLearnedContext, CategoryWorkPattern, CategoryProfile} {
		x.Categories[c] = &Category{Records: []ExportRecord{}}
	}
	return x
}

// Add puts a record in a category ("" means learned_context) and reports
// whether it was new. A record whose MemoryID is already present is merged
// into it; without a MemoryID one is derived from the content.
func (x *Export) Add(category string, r ExportRecord) bool {
	return x.put(cmp.Or(category, CategoryLearnedContext), r, "", rankEvent)
}

// AddNpub adds the agent's record of the person
// (docs/events.md#d-tag-namespaces-of-kind-30078): display
// names, when they were seen, notes and owner notes as "profile" records,
// preferences as "preference" records. The record carries no time per note,
// so notes are dated at first sight. Another person's record is refused.
func (x *Export) AddNpub(n memory.Npub) bool {
	pk, err := snowclaw.ParsePubkey(n.Pubkey)
	if err != nil || x.pubkey == "" || pk != x.pubkey {
		return false
	}
	x.covered[snowclaw.PrefixMemoryNpub+snowclaw.NpubOf(pk)] = true
	x.covered[snowclaw.PrefixMemoryNpub+pk] = true
	x.covered[snowclaw.PrefixMemoryNpub+pk[:32]] = true
	seen := cmp.Or(unixUTC(n.FirstSeen), unixUTC(n.LastInteraction), x.ExportedAt)
	base := ExportRecord{Tier: string(snowclaw.TierPrivate), Kind: snowclaw.KindAppData, Source: memory.SourceAgent, CreatedAt: seen}
	added := false
	add := func(category, id, content, source string, at time.Time) {
		r := base
		r.MemoryID, r.Content, r.Source, r.CreatedAt = id, content, cmp.Or(source, r.Source), cmp.Or(at, seen)
		added = x.put(category, r, "", rankAgent) || added
	}
	for _, d := range n.DisplayNames {
		add(CategoryProfile, "profile:name:"+shortHash(d.Name), "Display name: "+d.Name, "", unixUTC(d.At))
	}
	add(CategoryProfile, "profile:seen", seenSummary(n), "", seen)
	for _, note := range n.Notes {
		add(CategoryProfile, "profile:note:"+shortHash(note), note, memory.SourceAgent, seen)
	}
	for _, note := range n.OwnerNotes {
		add(CategoryProfile, "profile:owner-note:"+shortHash(note), note, memory.SourceOwner, seen)
	}
	for k, v := range n.Preferences {
		add(CategoryPreference, "preference:"+k, k+": "+v, "", seen)
	}
	// what was learnt in conversation, per scope (memory.Facet)
	learnt := func(scope string, f memory.Facet) {
		where := "private"
		if scope != "" {
			where = "group " + scope
		}
		for _, note := range f.Notes {
			add(CategoryProfile, "profile:learnt:"+shortHash(scope+"|"+note), note+" (learnt in "+where+")", memory.SourceAgent, seen)
		}
		for k, v := range f.Preferences {
			add(CategoryPreference, "preference:learnt:"+shortHash(scope+"|"+k), k+": "+v+" (learnt in "+where+")", memory.SourceAgent, seen)
		}
	}
	if n.Private != nil {
		learnt("", *n.Private)
	}
	for g, f := range n.Groups {
		learnt(g, f)
	}
	return added
}

// AddItem adds a long-term memory as "learned_context", or "preference"
// when its topic is a preferences topic. eventID is the id of its stored
// event, if any; with it (or through the shared d tag) the item and the
// event become one record. Private and internal items are added only when
// they are about this person.
func (x *Export) AddItem(it memory.Item, eventID string) bool {
	if it.Tier == snowclaw.TierPrivate || it.Tier == snowclaw.TierInternal {
		if pk, err := snowclaw.ParsePubkey(it.Subject); err != nil || x.pubkey == "" || pk != x.pubkey {
			return false
		}
	}
	r := ExportRecord{
		MemoryID:  cmp.Or(strings.ToLower(strings.TrimSpace(eventID)), it.ID),
		Content:   joinParagraphs(it.Text, it.Detail, labelled("Context", it.Context)),
		Tier:      string(it.Tier),
		Topic:     it.Topic,
		Group:     it.Group,
		Source:    it.Source,
		Kind:      snowclaw.KindAppData,
		CreatedAt: unixUTC(it.CreatedAt),
	}
	// The codec tags an item with the first segment of its topic.
	if t, _, _ := strings.Cut(it.Topic, "/"); t != "" {
		r.TopicTags = []string{t}
	}
	addr := ""
	if it.Topic != "" {
		addr = snowclaw.PrefixMemoryItem + it.Topic
	}
	return x.put(itemCategory(it.Topic), r, addr, rankAgent)
}

func itemCategory(topic string) string {
	if strings.Contains(topic, "/preferences") {
		return CategoryPreference
	}
	return CategoryLearnedContext
}

// AddMessage adds a buffered chat message as "conversation". Source says
// who spoke: "user" (this person), "agent" or "other".
func (x *Export) AddMessage(m memory.HistoryMessage) bool {
	r := ExportRecord{
		MemoryID:  strings.ToLower(m.EventID),
		Content:   m.Content,
		Group:     m.Group,
		Kind:      m.Kind,
		Source:    "other",
		CreatedAt: unixUTC(m.Timestamp),
	}
	switch {
	case m.Self:
		r.Source = memory.SourceAgent
	case x.pubkey != "" && strings.EqualFold(m.Pubkey, x.pubkey):
		r.Source = "user"
	}
	if m.Group != "" {
		r.Tier = string(snowclaw.TierGroup)
	}
	return x.put(CategoryConversation, r, "", rankEvent)
}

// AddEvent adds an event the person wrote or that is about them. text is
// its readable content (decrypted for encrypted events); without it the
// plain content is used. Kind 30078 goes to "learned_context" (or
// "preference", or "profile" for the agent's record of the person, unless
// AddNpub already exported it), kind 0 to "profile", anything else to
// "conversation". Encrypted events are refused unless this person wrote
// them or is their p-tagged reader.
func (x *Export) AddEvent(raw *nostr.Event, text string) bool {
	evt := snowclaw.ReadEvent(raw)
	if evt == nil || !x.mayRead(evt) {
		return false
	}
	ns, rest := evt.Namespace, evt.Subject
	d := ""
	if evt.Kind == snowclaw.KindAppData {
		d = evt.D
		if x.covered[d] {
			return false
		}
	}
	category := CategoryConversation
	switch {
	case evt.Kind == snowclaw.KindProfile || ns == snowclaw.NamespaceMemoryNpub:
		category = CategoryProfile
	case ns == snowclaw.NamespaceMemoryItem:
		category = itemCategory(rest)
	case evt.Kind == snowclaw.KindAppData:
		category = CategoryLearnedContext
	}
	r := ExportRecord{
		MemoryID:  strings.ToLower(evt.ID),
		Content:   eventText(evt, text),
		Tier:      string(evt.Tier),
		Group:     evt.Group,
		TopicTags: snowclaw.TagValues(raw, "t"),
		Kind:      evt.Kind,
		CreatedAt: evt.CreatedAt.Time().UTC(),
	}
	if ns == snowclaw.NamespaceMemoryItem {
		r.Topic = rest
	}
	if src := snowclaw.TagValues(raw, snowclaw.TagSource); len(src) > 0 {
		r.Source = src[0]
	} else if x.pubkey != "" && strings.EqualFold(evt.PubKey, x.pubkey) {
		r.Source = "user"
	}
	addr := ""
	if ns == snowclaw.NamespaceMemoryItem {
		addr = d
	}
	return x.put(category, r, addr, rankEvent)
}

func (x *Export) mayRead(evt *snowclaw.Event) bool {
	if !evt.Encrypted {
		return true
	}
	if x.pubkey == "" {
		return false
	}
	if strings.EqualFold(evt.PubKey, x.pubkey) {
		return true
	}
	person, ok := evt.Person(x.Agent)
	return ok && person == x.pubkey
}
