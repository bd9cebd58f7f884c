package remotesearch

import (
	"strings"
	"unicode"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// What leaves this relay. A remote search sends only what a public query
// needs: the free text and the public extensions (topic:, source:,
// model:, since:, until:, min_confidence:). It never sends group: or a
// tier other than public, explain, include:, the caller's identity (the
// connection never authenticates) or the REQ's other filter fields, which
// are applied here to what comes back.
//
// A query that names a group or a non-public tier asks for data only
// some readers may read; no remote result could satisfy it (remote
// results are public by definition), so such a query is not sent at all
// rather than sent with its scope stripped — the scope itself may say
// something (a group's name) the caller did not mean to publish.

// outgoing is the query sent to remotes for q, and false when q must stay
// here.
func outgoing(q snowclaw.SearchQuery) (snowclaw.SearchQuery, bool) {
	if len(q.Groups) > 0 || len(q.ScopedTiers()) > 0 {
		return snowclaw.SearchQuery{}, false
	}
	return snowclaw.SearchQuery{
		Text: q.Text, Topics: q.Topics, Sources: q.Sources, Models: q.Models,
		Since: q.Since, Until: q.Until, MinConfidence: q.MinConfidence,
	}, true
}

// filters are the REQ filters for a remote: NIP-50 where the remote
// lists it, else seed 003's fallback, a tag and kind filter: memory items
// whose t tags name a word of the query or a topic, and the most recent
// memory items, which are ranked here like any other candidates (the
// relevance floor drops the unrelated ones).
func filters(q snowclaw.SearchQuery, nip50 bool, limit int) nostr.Filters {
	base := nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Limit: limit}
	if len(q.Sources) > 0 {
		base.Authors = q.Sources
	}
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
