package search

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/snowclaw/snowclaw"
)

// Live trust (the owner's source preference list,
// docs/api.md#the-source-preference-list-owner-config): the owner can
// reorder sources at run time, while the file-configured weights in
// Options.Sources stay the base. A source named in the live map takes its
// weight from there; every other source keeps its file weight, or
// DefaultTrust.

// liveSources holds the live weights. Ranking reads them once per doc on
// every search, so they sit behind an atomic pointer: a search never
// waits for the owner's update, and an update replaces the whole map at
// once, never half of it.
type liveSources struct {
	p atomic.Pointer[map[string]float64]
}

// PreferenceSpan is how far above DefaultTrust the head of a preference
// list sits: the first of n sources weighs DefaultTrust × (1 + span), each
// next one span/n less, and the last still (1 + span/n) × DefaultTrust, so
// every listed source outranks an unlisted one and the order of the list
// decides between otherwise equal results.
const PreferenceSpan = 0.5

// MaxPreference bounds a preference list; a longer one is a mistake, and
// the weights of its tail would differ too little to matter.
const MaxPreference = 500

// PreferenceWeight is the weight of the source at rank i (0-based) of a
// preference list of n, given the default trust.
func PreferenceWeight(i, n int, defaultTrust float64) float64 {
	if n <= 0 || i < 0 || i >= n {
		return defaultTrust
	}
	return defaultTrust * (1 + PreferenceSpan*float64(n-i)/float64(n))
}

// NormalizeSource turns a source as people write it (npub, hex pubkey,
// "group:<id>") into the key the index uses: lowercase hex, or "group:<id>"
// unchanged.
func NormalizeSource(s string) (string, error) {
	s = strings.TrimSpace(s)
	if id, ok := strings.CutPrefix(s, "group:"); ok {
		if id == "" || strings.ContainsAny(id, " \t\n") {
			return "", fmt.Errorf("source %q: want group:<id>", s)
		}
		return s, nil
	}
	pk, err := snowclaw.ParsePubkey(s)
	if err != nil {
		return "", fmt.Errorf("source: %w (or group:<id>)", err)
	}
	return pk, nil
}

// SetSources replaces the live source weights (npub, hex or "group:<id>"
// → weight). nil or an empty map drops them, leaving the file-configured
// weights alone. A bad key or a weight that is not a positive number is an
// error and changes nothing. Searches and conflict listings that start
// afterwards rank with the new weights.
func (ix *Index) SetSources(m map[string]float64) error {
	live, err := LiveSources(m)
	if err == nil {
		ix.live.p.Store(&live)
	}
	return err
}

// LiveSources is m as SetSources keeps it (keys normalized), or why it
// cannot be.
func LiveSources(m map[string]float64) (map[string]float64, error) {
	live := make(map[string]float64, len(m))
	for k, w := range m {
		key, err := NormalizeSource(k)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if w <= 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("search: source %s: weight %v is not a positive number", k, w)
		}
		live[key] = w
	}
	return live, nil
}

// sourceWeight is the weight of one source key: the live one, else the
// file-configured one.
func (ix *Index) sourceWeight(key string) (float64, bool) {
	if live := ix.live.p.Load(); live != nil {
		if w, ok := (*live)[key]; ok {
			return w, true
		}
	}
	w, ok := ix.opts.Sources[key]
	return w, ok
}

// TrustTable is a snapshot of the trust configuration in effect, for
// callers that show it (the relay's trust and agent directory API).
type TrustTable struct {
	DefaultTrust float64
	// Sources are the effective source weights: the file's, overridden
	// by the live ones. Keys are lowercase hex or "group:<id>".
	Sources    map[string]float64
	ModelTiers []ModelTier
}

// Trust returns the trust configuration in effect.
func (ix *Index) Trust() TrustTable {
	var live map[string]float64
	if p := ix.live.p.Load(); p != nil {
		live = *p
	}
	return newTrustTable(ix.opts, live)
}

// TrustOf is the table an index opened with opts would use with the given
// live weights (already normalized, as SetSources stores them); for callers
// that have no index, such as a relay with search turned off.
func TrustOf(opts Options, live map[string]float64) (TrustTable, error) {
	o, err := normalizeOptions(Options{Sources: opts.Sources, ModelTiers: opts.ModelTiers, DefaultTrust: opts.DefaultTrust, Embedder: nullEmbedder{}})
	if err != nil {
		return TrustTable{}, err
	}
	return newTrustTable(o, live), nil
}

func newTrustTable(o Options, live map[string]float64) TrustTable {
	t := TrustTable{DefaultTrust: o.DefaultTrust, Sources: make(map[string]float64, len(o.Sources)+len(live)), ModelTiers: append([]ModelTier(nil), o.ModelTiers...)}
	for k, w := range o.Sources {
		t.Sources[k] = w
	}
	for k, w := range live {
		t.Sources[k] = w
	}
	return t
}

// Source is the weight of a source key (hex or "group:<id>") and whether
// it is configured at all; an unconfigured source weighs DefaultTrust.
func (t TrustTable) Source(key string) (float64, bool) {
	if w, ok := t.Sources[strings.ToLower(key)]; ok {
		return w, true
	}
	if w, ok := t.Sources[key]; ok { // group ids keep their case
		return w, true
	}
	return t.DefaultTrust, false
}

// Model is the factor of the first model tier matching model, 1 when none
// does.
func (t TrustTable) Model(model string) float64 {
	if model == "" {
		return 1
	}
	for _, mt := range t.ModelTiers {
		if ok, _ := matchGlob(mt.Pattern, model); ok {
			return mt.Weight
		}
	}
	return 1
}

// nullEmbedder lets TrustOf reuse normalizeOptions without building the
// built-in embedder.
type nullEmbedder struct{}

func (nullEmbedder) Name() string { return "none" }
func (nullEmbedder) Dim() int     { return 1 }
func (nullEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return nil, fmt.Errorf("search: no embedder")
}
