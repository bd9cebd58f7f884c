package snowclaw

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nbd-wtf/go-nostr"
)

// SearchQuery is a NIP-50 search string split into free text and the
// extensions of docs/design.md "Search". It is parsed once, here, for every reader of
// a search: the read rule (policies: a search for scoped data needs
// authentication, as an #h filter does) and the engine (search: which
// docs match) see the same extensions. Values of one key are alternatives
// (OR); different keys must all hold (AND).
type SearchQuery struct {
	Text              string   // free text, extensions removed
	Tiers             []string // tier:
	Topics            []string // t: / topic:, a topic or a prefix of one
	Sources           []string // source:, hex pubkeys
	Models            []string // model:, globs
	Groups            []string // group:
	Since, Until      int64    // unix seconds, 0 = unbounded
	MinConfidence     float64  // min_confidence:, 0 = any
	IncludeSuperseded bool     // include:superseded
	// IncludeRemote (include:remote) asks the remote relays of
	// [memory.remote] too (plugins/remotesearch); the local engine
	// ignores it.
	IncludeRemote bool
	Explain       bool // explain:true, the score breakdown
}

// Filter is a REQ or COUNT filter past the edge that read it (the
// websocket, the HTTP API, MCP): the NIP-01 fields, and for a NIP-50
// search the one parse of its search string. Everything below the edge
// (the read rule, the remote layer, the index) takes this value, so no
// two of them can read one search differently, and none adds flags by
// appending to a string the client wrote.
type Filter struct {
	nostr.Filter
	// Search is the parsed search, nil when the filter is no search. It
	// shadows the embedded string, which ReadFilter empties: code that
	// still reads f.Search as a string does not compile. Never modified
	// after the parse (copies of the filter share it): to change a flag,
	// copy the query.
	Search *SearchQuery
}

// ReadFilter parses f's search string; an unparsable one is an invalid:
// refusal naming what is wrong.
func ReadFilter(f nostr.Filter) (Filter, error) {
	if f.Search == "" {
		return Filter{Filter: f}, nil
	}
	q, err := ParseSearch(f.Search)
	if err != nil {
		return Filter{}, Invalid("search query: %v", err)
	}
	return SearchFilter(f, q), nil
}

// SearchFilter is f searching for q, for a search built in process (the
// agent's recall, the API's flags): f's own search string is dropped.
func SearchFilter(f nostr.Filter, q SearchQuery) Filter {
	f.Search = ""
	return Filter{Filter: f, Search: &q}
}

// Query is f's search, the zero query when f is no search.
func (f Filter) Query() SearchQuery {
	if f.Search == nil {
		return SearchQuery{}
	}
	return *f.Search
}

var validTiers = map[string]bool{"public": true, "group": true, "private": true, "internal": true}

// ParseSearch extracts the extensions from s. Unknown key:value tokens are
// dropped from the text, as NIP-50 asks; "scheme://" tokens stay text.
// Values may be quoted: topic:"project/snow claw". A malformed value of a
// known key is an error, so the client learns why nothing matched.
func ParseSearch(s string) (SearchQuery, error) {
	var p SearchQuery
	var text []string
	for _, tok := range lexQuery(s) {
		if tok.key == "" {
			text = append(text, tok.text())
			continue
		}
		if err := p.setExtension(tok.key, tok.value); err != nil {
			return SearchQuery{}, err
		}
	}
	p.Text = strings.Join(text, " ")
	return p, nil
}

// ScopedTiers lists the tiers the query narrows to that are not public:
// asking for them is asking for data only some readers may read.
func (p SearchQuery) ScopedTiers() []string {
	var out []string
	for _, t := range p.Tiers {
		if t != string(TierPublic) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (p *SearchQuery) setExtension(key, v string) error {
	if v == "" {
		return nil
	}
	switch key {
	case "tier":
		t := strings.ToLower(v)
		if !validTiers[t] {
			return fmt.Errorf("tier:%s: want public, group, private or internal", v)
		}
		p.Tiers = append(p.Tiers, t)
	case "t", "topic":
		p.Topics = append(p.Topics, v)
	case "source":
		hex, err := ParsePubkey(v)
		if err != nil {
			return fmt.Errorf("source:%s: %w", v, err)
		}
		p.Sources = append(p.Sources, hex)
	case "model":
		if _, err := path.Match(strings.ToLower(v), ""); err != nil {
			return fmt.Errorf("model:%s: %w", v, err)
		}
		p.Models = append(p.Models, v)
	case "group":
		p.Groups = append(p.Groups, v)
	case "since", "until":
		t, err := parseWhen(v, key == "until")
		if err != nil {
			return fmt.Errorf("%s:%s: %w", key, v, err)
		}
		if key == "since" {
			p.Since = t
		} else {
			p.Until = t
		}
	case "min_confidence":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("min_confidence:%s: want a number in [0,1]", v)
		}
		p.MinConfidence = f
	case "include":
		switch strings.ToLower(v) {
		case "superseded":
			p.IncludeSuperseded = true
		case "remote":
			p.IncludeRemote = true
		}
	case "explain":
		if strings.EqualFold(v, "true") || strings.EqualFold(v, "yes") {
			p.Explain = true
		}
	}
	return nil
}

// parseWhen reads YYYY-MM-DD (UTC; until: covers the whole day) or unix
// seconds.
func parseWhen(v string, endOfDay bool) (int64, error) {
	if t, err := time.Parse("2006-01-02", v); err == nil {
		if t.Unix() < 0 {
			return 0, fmt.Errorf("dates before 1970 are not supported")
		}
		if endOfDay {
			return t.Unix() + 86399, nil
		}
		return t.Unix(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want YYYY-MM-DD or unix seconds")
	}
	return n, nil
}

// String writes p back as a query string that parses to p again.
func (p SearchQuery) String() string {
	var parts []string
	if p.Text != "" {
		parts = append(parts, p.Text)
	}
	add := func(key string, vals []string) {
		for _, v := range vals {
			parts = append(parts, key+":"+quoteValue(v))
		}
	}
	add("tier", p.Tiers)
	add("topic", p.Topics)
	add("source", p.Sources)
	add("model", p.Models)
	add("group", p.Groups)
	if p.Since > 0 {
		parts = append(parts, "since:"+strconv.FormatInt(p.Since, 10))
	}
	if p.Until > 0 {
		parts = append(parts, "until:"+strconv.FormatInt(p.Until, 10))
	}
	if p.MinConfidence > 0 {
		parts = append(parts, "min_confidence:"+strconv.FormatFloat(p.MinConfidence, 'g', -1, 64))
	}
	if p.IncludeSuperseded {
		parts = append(parts, "include:superseded")
	}
	if p.IncludeRemote {
		parts = append(parts, "include:remote")
	}
	if p.Explain {
		parts = append(parts, "explain:true")
	}
	return strings.Join(parts, " ")
}

func quoteValue(v string) string {
	if v == "" || strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "//") || strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return `"` + v + `"`
	}
	return v
}

// queryToken is a free-text word, a quoted phrase, or key:value.
type queryToken struct {
	key, value string // key != "" for an extension
	word       string // free text
	phrase     bool   // word came in quotes
}

func (t queryToken) text() string {
	if t.phrase {
		return `"` + t.word + `"`
	}
	return t.word
}

// lexQuery splits s on white space, keeping quoted phrases and quoted
// extension values whole. An unterminated quote runs to the end.
func lexQuery(s string) []queryToken {
	var out []queryToken
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		if r == '"' {
			body, next := readQuoted(s, i+1)
			i = next
			if strings.TrimSpace(body) != "" {
				out = append(out, queryToken{word: body, phrase: true})
			}
			continue
		}
		start := i
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += n
		}
		word := s[start:i]
		key, val, ok := splitExtension(word)
		if !ok {
			out = append(out, queryToken{word: word})
			continue
		}
		if strings.HasPrefix(val, `"`) {
			// key:"value with spaces": the value runs to the closing quote.
			body, next := readQuoted(s, start+len(key)+2)
			i = next
			val = body
		}
		out = append(out, queryToken{key: strings.ToLower(key), value: val})
	}
	return out
}

// readQuoted returns the text from i up to the next '"' and the position
// after that quote.
func readQuoted(s string, i int) (string, int) {
	j := strings.IndexByte(s[i:], '"')
	if j < 0 {
		return s[i:], len(s)
	}
	return s[i : i+j], i + j + 1
}

// splitExtension recognises key:value with a key of letters, digits and
// underscores starting with a letter. URLs ("https://…") and times
// ("10:30") are not extensions.
func splitExtension(w string) (key, val string, ok bool) {
	k, v, found := strings.Cut(w, ":")
	if !found || k == "" || v == "" || strings.HasPrefix(v, "//") {
		return "", "", false
	}
	for i, r := range k {
		switch {
		case r < utf8.RuneSelf && unicode.IsLetter(r):
		case i > 0 && (r == '_' || (r >= '0' && r <= '9')):
		default:
			return "", "", false
		}
	}
	return k, v, true
}
