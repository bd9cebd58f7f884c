package rights

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Selector kinds, as recorded in the audit log.
const (
	SelectIDs    = "ids"
	SelectTopic  = "topic"
	SelectTags   = "tags"
	SelectBefore = "before"
	SelectQuery  = "query"
	selectMixed  = "mixed"
)

// Selector says which of a person's memories a forget targets
// (docs/privacy.md: by ids, topic, tags, date or query). Exactly one field is set. It selects among
// events; restricting them to the person's own (their private memories,
// what they wrote) is the caller's job, so a selector never reaches beyond
// what the caller hands it.
type Selector struct {
	IDs    []string  `json:"ids,omitempty"`   // event ids, 64 hex
	Topic  string    `json:"topic,omitempty"` // "<topic>" or "snow:memory:<topic>"; whole segments
	Tags   []string  `json:"tags,omitempty"`  // t tags; any of them matches
	Before time.Time `json:"before,omitzero"` // created strictly before
	Query  string    `json:"query,omitempty"` // words; see Match
}

// Kind names the one selector that is set, for the audit log, which must
// record how a forget was asked without recording what it was about. It is
// "" when none is set and "mixed" when several are (an invalid selector).
func (s Selector) Kind() string {
	var kinds []string
	if len(s.IDs) > 0 {
		kinds = append(kinds, SelectIDs)
	}
	if strings.TrimSpace(s.Topic) != "" {
		kinds = append(kinds, SelectTopic)
	}
	if len(s.Tags) > 0 {
		kinds = append(kinds, SelectTags)
	}
	if !s.Before.IsZero() {
		kinds = append(kinds, SelectBefore)
	}
	if strings.TrimSpace(s.Query) != "" {
		kinds = append(kinds, SelectQuery)
	}
	switch len(kinds) {
	case 0:
		return ""
	case 1:
		return kinds[0]
	}
	return selectMixed
}

func validSelectorKind(k string) bool {
	switch k {
	case "", SelectIDs, SelectTopic, SelectTags, SelectBefore, SelectQuery, selectMixed:
		return true
	}
	return false
}

// Validate checks that exactly one selector is set and well formed.
func (s Selector) Validate() error {
	switch s.Kind() {
	case "":
		return errors.New("nothing selected: give ids, a topic, tags, a date or words to forget")
	case selectMixed:
		return errors.New("give only one of ids, topic, tags, before or a query")
	case SelectIDs:
		for _, id := range s.IDs {
			if len(id) != 64 || !isHex(id) {
				return fmt.Errorf("%q is not an event id (64 hex characters)", id)
			}
		}
	case SelectTopic:
		if t := topicPrefix(s.Topic); t == "" || strings.ContainsFunc(t, unicode.IsSpace) {
			return fmt.Errorf("%q is not a topic: topics look like project/name or user/…/preferences", s.Topic)
		}
	case SelectTags:
		for _, t := range s.Tags {
			if normalizeTag(t) == "" {
				return errors.New("empty tag in the tag list")
			}
		}
	case SelectQuery:
		if len(words(s.Query)) == 0 {
			return errors.New("the query has no words")
		}
	}
	return nil
}

// Match reports whether evt is selected. text is the readable summary of
// the event (decrypted for private memories); when empty, the content of an
// unencrypted event is used instead.
//
// For a Query, Match is the simple fallback: every query word appears in the
// text as a word, ignoring case. Callers normally resolve a query with the
// search index instead, and show the matches for confirmation before
// forgetting anything (docs/privacy.md). An invalid selector matches nothing, so an
// empty forget can never mean "everything".
func (s Selector) Match(evt *nostr.Event, text string) bool {
	if evt == nil || s.Validate() != nil {
		return false
	}
	switch s.Kind() {
	case SelectIDs:
		for _, id := range s.IDs {
			if strings.EqualFold(id, evt.ID) {
				return true
			}
		}
	case SelectTopic:
		e := snowclaw.ReadEvent(evt)
		p := topicPrefix(s.Topic)
		return e.IsMemoryItem() && (e.Subject == p || strings.HasPrefix(e.Subject, p+"/"))
	case SelectTags:
		for _, have := range snowclaw.TagValues(evt, "t") {
			for _, want := range s.Tags {
				if strings.EqualFold(normalizeTag(want), strings.TrimSpace(have)) {
					return true
				}
			}
		}
	case SelectBefore:
		return evt.CreatedAt.Time().Before(s.Before)
	case SelectQuery:
		if text == "" && !snowclaw.ReadEvent(evt).Encrypted {
			text = evt.Content
		}
		have := map[string]bool{}
		for _, w := range words(text) {
			have[w] = true
		}
		for _, w := range words(s.Query) {
			if !have[w] {
				return false
			}
		}
		return true
	}
	return false
}

// topicPrefix accepts a topic with or without its d-tag prefix. Matching is
// by whole segments ("project/a" covers "project/a/x", not "project/ab"):
// forgetting more than was asked is the mistake a forget must not make.
func topicPrefix(t string) string {
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(t, snowclaw.PrefixMemoryItem)
	return strings.TrimRight(t, "/")
}

func normalizeTag(t string) string {
	return strings.TrimPrefix(strings.TrimSpace(t), "#")
}

// words splits text into lower-case words of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// ParseSelector reads the argument of a "forget …" private message:
//
//	id <hex>[,<hex>…]     specific events (a bare list of ids works too)
//	topic <prefix>        memories under a topic
//	tag <t>[,<t>…]        memories with any of these t tags
//	before 2026-01-31     everything created before that day (UTC)
//	anything else         a query, to be confirmed before anything goes
//
// A keyword followed by something unusable is an error rather than a query,
// so that "forget id abc" explains itself instead of searching for "id abc".
func ParseSelector(arg string) (Selector, error) {
	text := strings.TrimSpace(arg)
	if text == "" {
		return Selector{}, errors.New("forget what? say e.g. \"forget topic project/x\", \"forget tag work\", \"forget before 2026-01-31\" or some words")
	}
	head, rest, _ := strings.Cut(text, " ")
	rest = strings.TrimSpace(rest)
	var s Selector
	switch strings.ToLower(head) {
	case "id", "ids":
		s.IDs = splitList(rest)
		if len(s.IDs) == 0 {
			return Selector{}, errors.New("id needs one or more event ids, separated by commas")
		}
	case "topic":
		if rest == "" {
			return Selector{}, errors.New("topic needs a topic, e.g. \"topic project/x\"")
		}
		s.Topic = rest
	case "tag", "tags":
		for _, t := range splitList(rest) {
			if t = normalizeTag(t); t != "" {
				s.Tags = append(s.Tags, t)
			}
		}
		if len(s.Tags) == 0 {
			return Selector{}, errors.New("tag needs one or more tags, e.g. \"tag work,travel\"")
		}
	case "before":
		at, err := parseDate(rest)
		if err != nil {
			return Selector{}, err
		}
		s.Before = at
	default:
		if list := splitList(text); allEventIDs(list) {
			s.IDs = list
		} else {
			s.Query = strings.Trim(text, "\"'“”‘’ ")
		}
	}
	for i, id := range s.IDs {
		s.IDs[i] = strings.ToLower(id)
	}
	return s, s.Validate()
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

func allEventIDs(list []string) bool {
	for _, id := range list {
		if len(id) != 64 || !isHex(id) {
			return false
		}
	}
	return len(list) > 0
}

func parseDate(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("before needs a date like 2026-01-31, not %q", s)
}
