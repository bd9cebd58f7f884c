package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/search"
)

// Live trust: the owner's source preference list
// (docs/api.md#the-source-preference-list-owner-config) is dynamic
// config, the key source_preference of snowclaw:config:global. The relay
// turns it into source weights for the search index whenever a version of
// that event is stored or deleted, and once at start from the stored one.
// The stored event is the only state: nothing here survives a restart
// that the event does not carry.

// keySourcePreference is the config key (JSON content or tag).
const keySourcePreference = "source_preference"

// trustLive serialises applications, so that two config events saved at
// once cannot leave the older list in force: each application reads the
// newest stored version rather than trusting the event it was woken by.
type trustLive struct{ mu sync.Mutex }

// ConfigChanged is the hook for a stored or deleted event (attach it to
// both, after the store's own step): a version of the owner's global
// config re-applies the list in force.
func (s *Service) ConfigChanged(ctx context.Context, evt *snowclaw.Event) {
	if s.isGlobalConfig(evt) {
		s.ApplyTrust(ctx)
	}
}

// ApplyTrust reads the stored global config and hands its preference list
// to the index; call it once at start, after the index is open. A stored
// list that cannot be read (from before this check existed) is logged and
// counts as no list.
func (s *Service) ApplyTrust(ctx context.Context) {
	s.trust.mu.Lock()
	defer s.trust.mu.Unlock()
	if s.o.Index == nil {
		return // no ranking to change; the trust API reads the event itself
	}
	evt, err := s.globalConfig(ctx)
	if err != nil {
		s.log.Error("reading the global config for source_preference", "err", err)
		return
	}
	list, err := preferenceList(evt)
	if err != nil {
		s.log.Warn("ignoring the stored source_preference", "event", evt.ID, "err", err)
		list = nil
	}
	if err := s.o.Index.SetSources(preferenceWeights(list, s.o.Index.Trust().DefaultTrust)); err != nil {
		s.log.Error("applying source_preference", "err", err)
		return
	}
	s.log.Info("source preference applied", "sources", len(list))
}

// RejectBadPreference refuses an owner config event whose
// source_preference cannot be read, so the list in force stays and the
// owner learns why at once. Non-owners were refused before this runs.
func (s *Service) RejectBadPreference(_ context.Context, evt *snowclaw.Event) error {
	if evt.Kind != snowclaw.KindAppData || evt.D != snowclaw.DTagConfigGlobal {
		return nil
	}
	if _, err := preferenceList(evt.Event); err != nil {
		return snowclaw.Invalid("%v", err)
	}
	return nil
}

// isGlobalConfig: the owner's snowclaw:config:global.
func (s *Service) isGlobalConfig(evt *snowclaw.Event) bool {
	return s.ids.Owner != "" && evt.PubKey == s.ids.Owner && evt.Kind == snowclaw.KindAppData &&
		evt.D == snowclaw.DTagConfigGlobal
}

// globalConfig is the stored owner's global config event, nil when there
// is none. A #d filter matches any d tag of an event, so the owner's
// other events that carry snowclaw:config:global as a second d tag come
// back too: the config is the one whose address it is (its first d, as
// the write rule and the agent read it).
func (s *Service) globalConfig(ctx context.Context) (*nostr.Event, error) {
	if s.ids.Owner == "" {
		return nil, nil
	}
	var newest *nostr.Event
	err := store.Each(ctx, s.o.Store, nostr.Filter{
		Kinds: []int{snowclaw.KindAppData}, Authors: []string{s.ids.Owner},
		Tags: nostr.TagMap{"d": {snowclaw.DTagConfigGlobal}},
	}, func(evt *nostr.Event) bool {
		if !s.isGlobalConfig(snowclaw.ReadEvent(evt)) {
			return true
		}
		if newest == nil || evt.CreatedAt > newest.CreatedAt || (evt.CreatedAt == newest.CreatedAt && evt.ID < newest.ID) {
			newest = evt
		}
		return true
	})
	return newest, err
}

// preferenceList reads source_preference off a config event: sources as
// index keys (hex pubkey or "group:<id>"), most trusted first. A tag
// ["source_preference", a, b, …] wins over the JSON content, as tags do
// for every config key. No key (or null) is no list; an empty one clears
// the list. A repeated source keeps its first place.
func preferenceList(evt *nostr.Event) ([]string, error) {
	if evt == nil {
		return nil, nil
	}
	var raw []string
	found := false
	if c := strings.TrimSpace(evt.Content); strings.HasPrefix(c, "{") {
		var body map[string]json.RawMessage
		// content that is not JSON is the agent's to complain about; it
		// carries no list
		if json.Unmarshal([]byte(c), &body) == nil {
			if v, ok := body[keySourcePreference]; ok && string(v) != "null" {
				if err := json.Unmarshal(v, &raw); err != nil {
					return nil, errors.New(`source_preference must be a JSON array of strings (npub or "group:<id>"), most trusted first`)
				}
				found = true
			}
		}
	}
	for _, tag := range evt.Tags {
		if len(tag) >= 1 && tag[0] == keySourcePreference {
			raw, found = tag[1:], true
		}
	}
	if !found {
		return nil, nil
	}
	if len(raw) > search.MaxPreference {
		return nil, fmt.Errorf("source_preference lists %d sources, at most %d are allowed", len(raw), search.MaxPreference)
	}
	list := make([]string, 0, len(raw))
	seen := make(map[string]bool, len(raw))
	for i, s := range raw {
		key, err := search.NormalizeSource(s)
		if err != nil {
			return nil, fmt.Errorf("source_preference entry %d: %w", i+1, err)
		}
		if !seen[key] {
			seen[key] = true
			list = append(list, key)
		}
	}
	return list, nil
}

// preferenceWeights maps a list to weights (search.PreferenceWeight).
func preferenceWeights(list []string, defaultTrust float64) map[string]float64 {
	m := make(map[string]float64, len(list))
	for i, key := range list {
		m[key] = search.PreferenceWeight(i, len(list), defaultTrust)
	}
	return m
}
