package node_test

import (
	"math"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	memsvc "github.com/snowclaw/snowclaw/plugins/memory"
)

func findAgent(d memsvc.Directory, pk string) (memsvc.AgentEntry, bool) {
	for _, a := range d.Agents {
		if a.Pubkey == pk {
			return a, true
		}
	}
	return memsvc.AgentEntry{}, false
}

// TestDirectory_Agents: profiles with snow:model (in the content or as
// tags) are listed with their trust and rank; plain profiles are not; the
// relay's own agent is listed although it published no profile.
func TestDirectory_Agents(t *testing.T) {
	e := startAgentEnv(t)
	studio, tagged, human := newUser(), newUser(), newUser()
	c := e.connect(nil)
	e.mustPublish(c, mkEvent(studio, 0, nil, `{"name":"snow-studio","about":"Snowclaw instance on studio","snow:model":"anthropic/claude-opus-4-6","snow:version":"0.1.0","snow:capabilities":["memory","code","nostr"],"snow:operator":"`+npub(e.alice)+`"}`))
	e.mustPublish(c, mkEvent(tagged, 0, nostr.Tags{{"snow:model", "meta/llama-3-8b"}, {"snow:capabilities", "memory", "chat"}}, `{"name":"little-llama"}`))
	e.mustPublish(c, mkEvent(human, 0, nil, `{"name":"just a person"}`))
	oc := e.connect(&e.owner)
	e.mustPublish(oc, preferenceConfig(e.owner, nostr.Now()+1, false, npub(tagged), npub(studio)))

	var d memsvc.Directory
	if code, msg := e.v1(&e.bob, "GET", "/api/v1/agents", nil, &d); code != 200 {
		t.Fatalf("agents: %d %s", code, msg)
	}
	for _, tc := range []struct {
		name  string
		pk    string
		want  memsvc.AgentEntry
		trust float64
	}{
		{"content profile", studio.pk, memsvc.AgentEntry{Name: "snow-studio", Model: "anthropic/claude-opus-4-6", Version: "0.1.0", Operator: npub(e.alice), Rank: 2}, 1.25},
		{"tag profile", tagged.pk, memsvc.AgentEntry{Name: "little-llama", Model: "meta/llama-3-8b", Rank: 1}, 1.5},
		{"self", e.agent.pk, memsvc.AgentEntry{Name: "Snowclaw", Model: "ollama/test-model", Version: "test", Operator: npub(e.owner), IsSelf: true}, 1},
	} {
		a, ok := findAgent(d, tc.pk)
		if !ok {
			t.Errorf("%s: not listed in %+v", tc.name, d.Agents)
			continue
		}
		w := tc.want
		if a.Name != w.Name || a.Model != w.Model || a.Version != w.Version || a.Operator != w.Operator || a.Rank != w.Rank || a.IsSelf != w.IsSelf {
			t.Errorf("%s: got %+v, want %+v", tc.name, a, w)
		}
		if math.Abs(a.Trust-tc.trust) > 1e-9 || a.Npub != snowclaw.NpubOf(tc.pk) {
			t.Errorf("%s: trust %v npub %s, want %v", tc.name, a.Trust, a.Npub, tc.trust)
		}
	}
	if a, _ := findAgent(d, tagged.pk); len(a.Capabilities) != 2 || a.Capabilities[1] != "chat" {
		t.Errorf("tag capabilities %v, want [memory chat]", a.Capabilities)
	}
	if _, ok := findAgent(d, human.pk); ok {
		t.Errorf("a profile without snow:model is listed")
	}
	if len(d.Agents) < 3 || d.Agents[0].Pubkey != tagged.pk || d.Agents[1].Pubkey != studio.pk {
		t.Errorf("order %v, want the preference list first", d.Agents)
	}
	if len(d.Preference) != 2 || d.Preference[0].Source != npub(tagged) || d.Preference[0].Name != "little-llama" {
		t.Errorf("preference %+v, want little-llama first, named", d.Preference)
	}
	if code, _ := e.v1(nil, "GET", "/api/v1/agents", nil, nil); code != 401 {
		t.Errorf("agents without auth: %d, want 401", code)
	}
}
