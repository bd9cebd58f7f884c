package search

import (
	"math"
	"path"
	"strings"
	"time"
)

const defaultRRFK = 60

// trust is the source × model-tier factor (docs/design.md#search): a
// mediocre match from a trusted source can outrank a strong one from an
// untrusted source. A listed source wins over its group, as the first
// match in the owner's preference list would
// (docs/api.md#the-source-preference-list-owner-config).
func (ix *Index) trust(d *Doc) float64 {
	t := ix.opts.DefaultTrust
	src := d.Source
	if src == "" {
		src = d.Pubkey
	}
	if w, ok := ix.sourceWeight(strings.ToLower(src)); ok {
		t = w
	} else if w, ok := ix.sourceWeight("group:" + d.Group); ok && d.Group != "" {
		t = w
	}
	if d.Model != "" {
		for _, mt := range ix.opts.ModelTiers {
			if ok, _ := matchGlob(mt.Pattern, d.Model); ok {
				t *= mt.Weight
				break
			}
		}
	}
	return t
}

// matchGlob matches snow:model values case-insensitively; a pattern without
// wildcards also matches as a prefix ("anthropic/claude-opus-4" covers
// "anthropic/claude-opus-4-6"), since tier lists name model families.
func matchGlob(pattern, s string) (bool, error) {
	p, v := strings.ToLower(pattern), strings.ToLower(s)
	ok, err := path.Match(p, v)
	if err != nil || ok {
		return ok, err
	}
	if !strings.ContainsAny(p, "*?[") && strings.HasPrefix(v, p) {
		return true, nil
	}
	return false, nil
}

// confidenceFactor maps snow:confidence in (0,1] to [0.5,1]; a doc that
// states none counts as the midpoint of the scale, neither trusted more nor
// less than an agent that said "0.5".
func confidenceFactor(c float64) float64 {
	if c <= 0 || math.IsNaN(c) {
		c = 0.5
	}
	if c > 1 {
		c = 1
	}
	return 0.5 + 0.5*c
}

// recencyFactor halves a doc's weight every half-life of age.
func (ix *Index) recencyFactor(d *Doc, now time.Time) float64 {
	hl := ix.opts.RecencyHalfLife
	if hl <= 0 || d.CreatedAt <= 0 {
		return 1
	}
	age := now.Sub(time.Unix(d.CreatedAt, 0))
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(hl))
}
