package memory

import (
	"context"
	"sort"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/search"
)

// TrustView is GET /api/v1/trust: the trust configuration ranking uses
// now (docs/api.md, "Directory, trust and conflicts").
type TrustView struct {
	Preference   []PreferenceEntry `json:"preference"`
	Configured   []PreferenceEntry `json:"configured"` // file weights of sources not in the list
	DefaultTrust float64           `json:"default_trust"`
	ModelTiers   []ModelTierView   `json:"model_tiers"`
	ConfigEvent  string            `json:"config_event"` // id of the owner's global config event, "" if none
}

// PreferenceEntry is one source and its weight.
type PreferenceEntry struct {
	Source string  `json:"source"` // npub, or "group:<id>"
	Weight float64 `json:"weight"`
	Name   string  `json:"name,omitempty"` // profile or group name, when known
}

// ModelTierView is one model tier: a glob over snow:model and its factor.
type ModelTierView struct {
	Pattern string  `json:"pattern"`
	Weight  float64 `json:"weight"`
}

// trustState is what the trust views are built from: the stored list and
// the weights in force.
type trustState struct {
	list  []string // index keys, most trusted first
	table search.TrustTable
	event string
}

func (s *Service) trustState(ctx context.Context) (trustState, error) {
	evt, err := s.globalConfig(ctx)
	if err != nil {
		return trustState{}, snowclaw.StoreFailed(err, "reading the global config")
	}
	var st trustState
	if evt != nil {
		st.event = evt.ID
		if st.list, err = preferenceList(evt); err != nil {
			st.list = nil // stored before the check existed; not applied either
		}
	}
	if s.o.Index != nil {
		st.table = s.o.Index.Trust()
		return st, nil
	}
	base, err := search.TrustOf(s.o.Ranking, nil)
	if err != nil {
		return trustState{}, snowclaw.Internal("trust configuration: %v", err)
	}
	st.table, err = search.TrustOf(s.o.Ranking, preferenceWeights(st.list, base.DefaultTrust))
	if err != nil {
		return trustState{}, snowclaw.Internal("trust configuration: %v", err)
	}
	return st, nil
}

// Trust is the trust configuration as reader may see it: a group in the
// list is shown only to those who may read the group's memories, since
// its id and name are the group's business.
func (s *Service) Trust(ctx context.Context, reader string) (TrustView, error) {
	st, err := s.trustState(ctx)
	if err != nil {
		return TrustView{}, err
	}
	names := s.profileNames(ctx, reader, append(append([]string(nil), st.list...), keysOf(st.table.Sources)...))
	v := TrustView{Preference: s.preferenceView(st, reader, names), Configured: []PreferenceEntry{},
		DefaultTrust: st.table.DefaultTrust, ModelTiers: []ModelTierView{}, ConfigEvent: st.event}
	inList := make(map[string]bool, len(st.list))
	for _, k := range st.list {
		inList[k] = true
	}
	file, err := search.TrustOf(s.o.Ranking, nil)
	if err == nil {
		for _, k := range keysOf(file.Sources) {
			if !inList[k] && s.maySeeSource(k, reader) {
				w, _ := file.Source(k)
				v.Configured = append(v.Configured, s.entry(k, w, names))
			}
		}
	}
	for _, mt := range st.table.ModelTiers {
		v.ModelTiers = append(v.ModelTiers, ModelTierView{Pattern: mt.Pattern, Weight: mt.Weight})
	}
	return v, nil
}

// preferenceView lists the preference entries reader may see, in order.
func (s *Service) preferenceView(st trustState, reader string, names map[string]string) []PreferenceEntry {
	out := []PreferenceEntry{}
	for _, k := range st.list {
		if s.maySeeSource(k, reader) {
			w, _ := st.table.Source(k)
			out = append(out, s.entry(k, w, names))
		}
	}
	return out
}

func (s *Service) entry(key string, w float64, names map[string]string) PreferenceEntry {
	e := PreferenceEntry{Source: snowclaw.NpubOf(key), Weight: w, Name: names[key]}
	if g, ok := strings.CutPrefix(key, "group:"); ok {
		e.Source = key
		if snap, ok := s.o.Groups.Snapshot(g); ok {
			e.Name = snap.Name
		}
	}
	return e
}

// maySeeSource: people are always shown; a group only to the owner, the
// agent and its members, or to anyone when it is neither private nor
// hidden. A group this relay does not host reveals nothing of its own.
func (s *Service) maySeeSource(key, reader string) bool {
	g, ok := strings.CutPrefix(key, "group:")
	if !ok {
		return true
	}
	info, exists := s.o.Groups.GroupInfo(g)
	switch {
	case !exists:
		return true
	case reader != "" && (s.ids.IsSystem(reader) || reader == s.ids.Owner):
		return true
	case s.o.Groups.IsMember(g, reader):
		return true
	}
	return !info.Private && !info.Hidden
}

// profileNames looks up the kind 0 names of the pubkeys among keys, as
// far as reader may read the profiles.
func (s *Service) profileNames(ctx context.Context, reader string, keys []string) map[string]string {
	var pks []string
	for _, k := range keys {
		if !strings.HasPrefix(k, "group:") {
			pks = append(pks, k)
		}
	}
	names := map[string]string{}
	if len(pks) == 0 {
		return names
	}
	ch, err := s.o.Store.QueryEvents(ctx, nostr.Filter{Kinds: []int{snowclaw.KindProfile}, Authors: pks, Limit: len(pks) * 2})
	if err != nil {
		s.log.Error("reading profiles", "err", err)
		return names
	}
	for evt := range ch {
		if _, seen := names[evt.PubKey]; !seen && s.o.CanRead(reader, evt) {
			names[evt.PubKey] = profileName(evt)
		}
	}
	return names
}

// profileName is a kind 0's display name, else its name.
func profileName(evt *nostr.Event) string {
	p, _ := snowclaw.ProfileOf(evt)
	return p.Shown()
}

func keysOf(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
