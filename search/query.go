package search

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/snowclaw/snowclaw"
)

// ParsedQuery is a NIP-50 search string split into free text and the
// extensions of docs/design.md "Search". Values of one key are alternatives (OR);
// different keys must all hold (AND).
type ParsedQuery struct {
	Text              string   // free text, extensions removed
	Tiers             []string // tier:
	Topics            []string // t: / topic:, a topic or a prefix of one
	Sources           []string // source:, hex pubkeys
	Models            []string // model:, globs
	Groups            []string // group:
	Since, Until      int64    // unix seconds, 0 = unbounded
	MinConfidence     float64  // min_confidence:, 0 = any
	IncludeSuperseded bool     // include:superseded
}

var validTiers = map[string]bool{"public": true, "group": true, "private": true, "internal": true}

// ParseQuery extracts the extensions from s. Unknown key:value tokens are
// dropped from the text, as NIP-50 asks; "scheme://" tokens stay text.
// Values may be quoted: topic:"project/snow claw". A malformed value of a
// known key is an error, so the client learns why nothing matched.
func ParseQuery(s string) (ParsedQuery, error) {
	var p ParsedQuery
	var text []string
	for _, tok := range lexQuery(s) {
		if tok.key == "" {
			text = append(text, tok.text())
			continue
		}
		if err := p.setExtension(tok.key, tok.value); err != nil {
			return ParsedQuery{}, err
		}
	}
	p.Text = strings.Join(text, " ")
	return p, nil
}

func (p *ParsedQuery) setExtension(key, v string) error {
	if v == "" {
		return nil
	}
	switch key {
	case "tier":
		t := strings.ToLower(v)
		if !validTiers[t] {
			return fmt.Errorf("search: tier:%s: want public, group, private or internal", v)
		}
		p.Tiers = append(p.Tiers, t)
	case "t", "topic":
		p.Topics = append(p.Topics, v)
	case "source":
		hex, err := snowclaw.ParsePubkey(v)
		if err != nil {
			return fmt.Errorf("search: source:%s: %w", v, err)
		}
		p.Sources = append(p.Sources, hex)
	case "model":
		if _, err := path.Match(strings.ToLower(v), ""); err != nil {
			return fmt.Errorf("search: model:%s: %w", v, err)
		}
		p.Models = append(p.Models, v)
	case "group":
		p.Groups = append(p.Groups, v)
	case "since", "until":
		t, err := parseWhen(v, key == "until")
		if err != nil {
			return fmt.Errorf("search: %s:%s: %w", key, v, err)
		}
		if key == "since" {
			p.Since = t
		} else {
			p.Until = t
		}
	case "min_confidence":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("search: min_confidence:%s: want a number in [0,1]", v)
		}
		p.MinConfidence = f
	case "include":
		if strings.EqualFold(v, "superseded") {
			p.IncludeSuperseded = true
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

// Match reports whether d meets every extension constraint (the free text
// is the ranker's business, not a filter).
func (p ParsedQuery) Match(d Doc) bool {
	if len(p.Tiers) > 0 && !containsFold(p.Tiers, d.Tier) {
		return false
	}
	if len(p.Topics) > 0 && !p.matchTopic(d) {
		return false
	}
	if len(p.Sources) > 0 {
		src := d.Source
		if src == "" {
			src = d.Pubkey
		}
		if !containsFold(p.Sources, src) && !containsFold(p.Sources, d.Pubkey) {
			return false
		}
	}
	if len(p.Models) > 0 {
		ok := false
		for _, m := range p.Models {
			if hit, _ := matchGlob(m, d.Model); hit && d.Model != "" {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(p.Groups) > 0 && !contains(p.Groups, d.Group) {
		return false
	}
	if p.Since > 0 && d.CreatedAt < p.Since {
		return false
	}
	if p.Until > 0 && d.CreatedAt > p.Until {
		return false
	}
	if p.MinConfidence > 0 && d.Confidence < p.MinConfidence {
		return false
	}
	return true
}

// matchTopic: a topic matches itself and everything below it
// ("project/x" matches "project/x/decisions"), and any t tag equal to it.
func (p ParsedQuery) matchTopic(d Doc) bool {
	for _, t := range p.Topics {
		t = strings.TrimSuffix(t, "/")
		if d.Topic == t || strings.HasPrefix(d.Topic, t+"/") {
			return true
		}
		if containsFold(d.Tags["t"], t) {
			return true
		}
	}
	return false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func containsFold(xs []string, s string) bool {
	for _, x := range xs {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// String writes p back as a query string that parses to p again.
func (p ParsedQuery) String() string {
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
	return strings.Join(parts, " ")
}

func quoteValue(v string) string {
	if v == "" || strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "//") || strings.IndexFunc(v, unicode.IsSpace) >= 0 {
		return `"` + v + `"`
	}
	return v
}
