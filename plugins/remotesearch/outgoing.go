package remotesearch

import (
	"strings"
	"unicode"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// What leaves this relay. A remote is an outsider: whatever it is sent,
// it keeps. So a layered search leaves only when the whole REQ filter is
// a question about public memories that names nobody, and then only its
// free text and public extensions (topic:, model:, since:, until:,
// min_confidence:) are sent; never explain, include:, the reader's
// identity (the connection never authenticates) or the filter's other
// fields, which are applied here to what comes back.
//
// Everything else stays here: the search is answered from this relay
// alone, with no error, as if no remote were configured. Refusing would
// tell the reader nothing useful, and sending the query with its scope
// stripped would still send the words, which in a scoped search are the
// scope's own (a group's plans, what someone wrote to a person). The
// direction is the safe one: a field this rule does not know keeps the
// search here.

// Why a search stays here (outgoing's second result); "" lets it leave.
const (
	stayIDs      = "ids name events"
	stayAuthors  = "authors name people"
	stayKinds    = "kinds other than memory items (30078)"
	stayTag      = "a tag filter other than #t"
	stayGroup    = "group: names a group"
	stayTier     = "tier: asks for a non-public tier"
	staySource   = "source: names a key"
	stayNamesKey = "the words name a key or an event"
	stayReader   = "the words name the reader"
	stayNoSearch = "the filter is no search"
)

// outgoing is the one rule for whether reader's layered search f may be
// sent to the remotes, and what is sent: the query and "" when it may
// leave, or why it stays. Every field of f is judged here; the reader
// only adds a check of the words (an abbreviation of the reader's own
// key says who asks), never widens what leaves.
func outgoing(reader string, f snowclaw.Filter) (snowclaw.SearchQuery, string) {
	q := f.Query()
	switch {
	case f.Search == nil:
		return snowclaw.SearchQuery{}, stayNoSearch
	case len(f.IDs) > 0:
		return snowclaw.SearchQuery{}, stayIDs
	case len(f.Authors) > 0:
		return snowclaw.SearchQuery{}, stayAuthors
	case len(q.Groups) > 0:
		return snowclaw.SearchQuery{}, stayGroup
	case len(q.ScopedTiers()) > 0:
		return snowclaw.SearchQuery{}, stayTier
	case len(q.Sources) > 0:
		// sent, it would be the remote filter's authors
		return snowclaw.SearchQuery{}, staySource
	}
	// a remote result is only ever a public memory item (servable): a
	// search for chat, DMs, notes or anything else gets nothing back
	// and would send its words for nothing
	for _, k := range f.Kinds {
		if k != snowclaw.KindAppData {
			return snowclaw.SearchQuery{}, stayKinds
		}
	}
	// #h is a group, #p a person, #d an address (snowclaw:memory:npub:…
	// names one), #e/#a/#q events; only topic words are public by kind
	for k := range f.Tags {
		if k != "t" {
			return snowclaw.SearchQuery{}, stayTag
		}
	}
	out := snowclaw.SearchQuery{
		Text: q.Text, Topics: q.Topics, Models: q.Models,
		Since: q.Since, Until: q.Until, MinConfidence: q.MinConfidence,
	}
	sent := append([]string{out.Text}, append(out.Topics, out.Models...)...)
	for _, s := range sent {
		if namesKey(s) {
			return snowclaw.SearchQuery{}, stayNamesKey
		}
		if namesReader(s, reader) {
			return snowclaw.SearchQuery{}, stayReader
		}
	}
	return out, ""
}

// bech32Entities are NIP-19's prefixes: each names a key (a person, or a
// secret pasted by mistake), an event or an address.
var bech32Entities = []string{"npub1", "nsec1", "nprofile1", "note1", "nevent1", "naddr1", "nrelay1", "ncryptsec1"}

// minHexRun is the shortest run of hex digits taken for a key, an id or
// a number that must not leave (a card number has 16 digits); words of
// a language are never this long in hex letters alone.
const minHexRun = 16

// namesKey reports whether s holds a NIP-19 entity or a long hex run.
func namesKey(s string) bool {
	for _, w := range words(s) {
		for _, p := range bech32Entities {
			if strings.HasPrefix(w, p) && len(w) > len(p)+8 {
				return true
			}
		}
		if len(w) >= minHexRun && isHex(w) {
			return true
		}
	}
	return false
}

// namesReader reports whether s holds a shortened form of reader's key:
// the first 8 or more hex digits, as clients show a key.
func namesReader(s, reader string) bool {
	if reader == "" {
		return false
	}
	for _, w := range words(s) {
		if len(w) >= 8 && isHex(w) && strings.Contains(reader, w) {
			return true
		}
	}
	return false
}

// words splits s into lower-case runs of letters and digits (nostr: URIs
// and punctuation around a key fall away).
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func isHex(w string) bool {
	for _, r := range w {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// filters are the REQ filters for a remote: NIP-50 where the remote
// lists it, else the fallback of docs/remote.md#what-a-layered-search-does,
// a tag and kind filter: memory items
// whose t tags name a word of the query or a topic, and the most recent
// memory items, which are ranked here like any other candidates (the
// relevance floor drops the unrelated ones).
func filters(q snowclaw.SearchQuery, nip50 bool, limit int) nostr.Filters {
	base := nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Limit: limit}
	if q.Since > 0 {
		ts := nostr.Timestamp(q.Since)
		base.Since = &ts
	}
	if q.Until > 0 {
		ts := nostr.Timestamp(q.Until)
		base.Until = &ts
	}
	if nip50 {
		f := base
		f.Search = q.String()
		return nostr.Filters{f}
	}
	tagged := base
	tagged.Tags = nostr.TagMap{"t": topicWords(q)}
	if len(tagged.Tags["t"]) == 0 {
		return nostr.Filters{base}
	}
	return nostr.Filters{tagged, base}
}

// topicWords are the t tag values the fallback asks for: the query's
// words in lower case and its topics, at most 20.
func topicWords(q snowclaw.SearchQuery) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		w = strings.ToLower(strings.TrimSpace(w))
		if len(w) < 3 || seen[w] || len(out) >= 20 {
			return
		}
		seen[w] = true
		out = append(out, w)
	}
	for _, t := range q.Topics {
		add(t)
	}
	for _, w := range strings.FieldsFunc(q.Text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
	}) {
		add(w)
	}
	return out
}
