package memory

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// recallDefault is how many items Recall returns when asked for n <= 0.
const recallDefault = 10

// Recall is the read path used when the search index is off
// (docs/agent.md#context):
// items that filter accepts (nil: all), scored by normalized word overlap
// with the query plus a recency bonus, best first, at most n. An item that
// shares no word with the query is left out; a query of only stop words
// returns the most recent items. Returned items get Hits+1 in the store
// without being marked dirty: a read must not cause a write to the relay,
// so hits travel with the item's next real update. filter runs under the
// store's lock and must not call the store.
func (s *Store) Recall(query string, filter func(Item) bool, n int) []Item {
	if n <= 0 {
		n = recallDefault
	}
	want := queryWords(query)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	type scored struct {
		it    *Item
		score float64
	}
	var hits []scored
	for _, it := range s.items {
		if filter != nil && !filter(*it) {
			continue
		}
		rel := overlap(want, it)
		if len(want) > 0 && rel == 0 {
			continue
		}
		hits = append(hits, scored{it, rel + 0.2*recency(now, it.UpdatedAt)})
	}
	slices.SortFunc(hits, func(a, b scored) int {
		return cmp.Or(
			cmp.Compare(b.score, a.score),
			cmp.Compare(b.it.UpdatedAt, a.it.UpdatedAt),
			strings.Compare(a.it.ID, b.it.ID),
		)
	})
	out := make([]Item, 0, min(n, len(hits)))
	for _, h := range hits[:min(n, len(hits))] {
		h.it.Hits++
		out = append(out, *h.it)
	}
	return out
}

// recency is 1 for a memory updated now, halving over about a month, so an
// old memory still counts when it matches better.
func recency(now, at int64) float64 {
	days := math.Max(float64(now-at)/86400, 0)
	return 1 / (1 + days/30)
}

// overlap is the share of query words the item contains: a word in the
// summary counts fully, one only in detail or context half, and a related
// form ("prefer", "prefers", "preferences") half again.
func overlap(want []string, it *Item) float64 {
	if len(want) == 0 {
		return 0
	}
	text := words(it.Text)
	extra := words(it.Detail + " " + it.Context)
	sum := 0.0
	for _, w := range want {
		sum += math.Max(match(w, text), match(w, extra)/2)
	}
	return sum / float64(len(want))
}

func match(w string, set map[string]bool) float64 {
	if set[w] {
		return 1
	}
	for x := range set {
		if related(w, x) {
			return 0.5
		}
	}
	return 0
}

// related is a stemmer's poor cousin: two words sharing a prefix of at
// least four letters that leaves at most two letters of the shorter one
// ("deploy"/"deploys"/"deployed", not "tea"/"team").
func related(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	n := 0
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n >= 4 && n >= min(len(ra), len(rb))-2
}

// queryWords are the distinct words of a query without stop words.
func queryWords(q string) []string {
	var out []string
	for w := range words(q) {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// words splits a text into its normalized words. Scripts written without
// spaces (Chinese, Japanese) are cut into overlapping pairs of characters,
// so "记住用户喜欢简洁" and "喜欢简洁" still share words.
func words(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(Normalize(s)) {
		rs := []rune(w)
		if !slices.ContainsFunc(rs, unspaced) {
			set[w] = true
			continue
		}
		if len(rs) == 1 {
			set[w] = true
		}
		for i := 0; i+1 < len(rs); i++ {
			set[string(rs[i:i+2])] = true
		}
	}
	return set
}

func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai)
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the is are was were be been am i me my mine you your
		we our us it its this that these those of to in on at by for with from and or but not no
		do does did what which who whom how when where why about please can could would should
		will shall tell know remember recall anything something`) {
		stopWords[w] = true
	}
}
