package memory

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// AgentEntry is one agent of the directory: a kind 0 profile carrying
// snow:model (docs/api.md#get-apiv1agents), with the trust ranking gives it.
type AgentEntry struct {
	Pubkey       string   `json:"pubkey"`
	Npub         string   `json:"npub"`
	Name         string   `json:"name"`
	About        string   `json:"about"`
	Model        string   `json:"model"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
	Operator     string   `json:"operator"` // npub of the human operator, "" if not given
	Trust        float64  `json:"trust"`    // source weight: preference list, else config file, else default
	ModelWeight  float64  `json:"model_weight"`
	Rank         int      `json:"rank"` // 1-based place in the preference list, 0 = not listed
	IsSelf       bool     `json:"is_self"`
	UpdatedAt    int64    `json:"updated_at"` // created_at of the profile, 0 for a profile not published
	// Origin is the remote relay the profile was found on; "" for a
	// profile stored here.
	Origin string `json:"origin,omitempty"`
}

// Directory is GET /api/v1/agents.
type Directory struct {
	Agents     []AgentEntry      `json:"agents"`
	Preference []PreferenceEntry `json:"preference"`
}

// Agents lists the agents known from stored profiles the reader may read,
// and this relay's own agent whether or not it published a profile.
// Order: the preference list first, in its order, then by trust, then by
// name.
func (s *Service) Agents(ctx context.Context, reader string) (Directory, error) {
	st, err := s.trustState(ctx)
	if err != nil {
		return Directory{}, err
	}
	rank := make(map[string]int, len(st.list))
	for i, k := range st.list {
		rank[k] = i + 1
	}
	var agents []AgentEntry
	selfSeen := false
	err = store.Each(ctx, s.o.Store, nostr.Filter{Kinds: []int{snowclaw.KindProfile}}, func(evt *nostr.Event) bool {
		if !s.o.CanRead(reader, evt) {
			return true
		}
		a, ok := agentProfile(evt)
		if evt.PubKey == s.ids.Agent {
			selfSeen = true
			if ok || s.o.Agent != nil {
				a, ok = s.selfEntry(a), true
			}
		}
		if ok {
			agents = append(agents, a)
		}
		return true
	})
	if err != nil {
		return Directory{}, snowclaw.StoreFailed(err, "reading profiles")
	}
	if s.o.Agent != nil && !selfSeen {
		agents = append(agents, s.selfEntry(AgentEntry{Pubkey: s.ids.Agent}))
	}
	agents = append(agents, s.remoteAgents(ctx, reader, agents)...)
	for i := range agents {
		a := &agents[i]
		a.Npub = snowclaw.NpubOf(a.Pubkey)
		a.Trust, _ = st.table.Source(a.Pubkey)
		a.ModelWeight = st.table.Model(a.Model)
		a.Rank = rank[a.Pubkey]
		if a.Capabilities == nil {
			a.Capabilities = []string{}
		}
	}
	sort.SliceStable(agents, func(i, j int) bool {
		a, b := agents[i], agents[j]
		switch {
		case (a.Rank > 0) != (b.Rank > 0):
			return a.Rank > 0
		case a.Rank != b.Rank:
			return a.Rank < b.Rank
		case a.Trust != b.Trust:
			return a.Trust > b.Trust
		case a.Name != b.Name:
			return a.Name < b.Name
		}
		return a.Pubkey < b.Pubkey
	})
	names := s.profileNames(ctx, reader, st.list)
	if agents == nil {
		agents = []AgentEntry{}
	}
	return Directory{Agents: agents, Preference: s.preferenceView(st, reader, names)}, nil
}

// remoteAgents are the agents the remote relays know that no profile
// here describes (a local profile wins: it is what this relay holds),
// under the local read rule, marked with their origin.
func (s *Service) remoteAgents(ctx context.Context, reader string, local []AgentEntry) []AgentEntry {
	if s.o.RemoteProfiles == nil {
		return nil
	}
	known := make(map[string]bool, len(local))
	for _, a := range local {
		known[a.Pubkey] = true
	}
	var out []AgentEntry
	for _, f := range s.o.RemoteProfiles(ctx) {
		if known[f.Event.PubKey] || f.Event.PubKey == s.ids.Agent || !s.o.CanRead(reader, f.Event) {
			continue
		}
		if a, ok := agentProfile(f.Event); ok {
			a.Origin = f.Origin
			out = append(out, a)
		}
	}
	return out
}

// selfEntry fills in this relay's agent from its configuration where its
// profile (if any) is silent: name, model (the configured LLM), version
// and operator (the owner).
func (s *Service) selfEntry(a AgentEntry) AgentEntry {
	a.IsSelf = true
	if a.Name == "" {
		a.Name = s.o.Self.AgentName
	}
	if a.Name == "" {
		a.Name = "Snowclaw"
	}
	if a.About == "" {
		a.About = "the resident agent of " + s.o.Self.RelayName
	}
	if a.Model == "" && s.o.Self.LLM != nil {
		a.Model = s.o.Self.LLM.Name()
	}
	if a.Version == "" {
		a.Version = s.o.Self.Version
	}
	if len(a.Capabilities) == 0 {
		a.Capabilities = []string{"memory", "search", "nostr"}
		if s.o.Self.LLM != nil {
			a.Capabilities = append(a.Capabilities, "chat")
		}
	}
	if a.Operator == "" && s.ids.Owner != "" {
		a.Operator = snowclaw.NpubOf(s.ids.Owner)
	}
	return a
}

// agentProfile reads the agent fields from a kind 0: JSON content keys
// snowclaw.Profile* (spelled out in the struct tags below, which cannot
// name a constant), or tags of those names (a tag wins). ok is false when
// the profile names no model, i.e. it is not an agent's.
func agentProfile(evt *nostr.Event) (AgentEntry, bool) {
	var c struct {
		snowclaw.Profile
		Model        string          `json:"snow:model"`
		Version      string          `json:"snow:version"`
		Capabilities json.RawMessage `json:"snow:capabilities"`
		Operator     string          `json:"snow:operator"`
	}
	// a profile that is not JSON may still carry the tags
	_ = json.Unmarshal([]byte(evt.Content), &c)
	a := AgentEntry{Pubkey: evt.PubKey, Name: c.Name, About: c.About, Model: c.Model, Version: c.Version,
		Operator: c.Operator, UpdatedAt: int64(evt.CreatedAt)}
	if a.Name == "" {
		a.Name = c.DisplayName
	}
	if len(c.Capabilities) > 0 {
		var list []string
		if json.Unmarshal(c.Capabilities, &list) == nil {
			a.Capabilities = list
		} else {
			var one string
			if json.Unmarshal(c.Capabilities, &one) == nil && one != "" {
				a.Capabilities = []string{one}
			}
		}
	}
	for _, t := range evt.Tags {
		if len(t) < 2 {
			continue
		}
		switch t[0] {
		case snowclaw.ProfileModel:
			a.Model = t[1]
		case snowclaw.ProfileVersion:
			a.Version = t[1]
		case snowclaw.ProfileOperator:
			a.Operator = t[1]
		case snowclaw.ProfileCapabilities:
			a.Capabilities = append([]string(nil), t[1:]...)
		}
	}
	if a.Operator != "" {
		a.Operator = snowclaw.NpubOf(a.Operator)
	}
	return a, a.Model != ""
}
