package node_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// The agent publishes who it is (docs/agent.md#the-agents-profile): a kind 0 clients show on its
// replies, with the model, version, capabilities and operator the
// directory reads, and a NIP-65 relay list; a restart with nothing changed
// writes nothing new.
func TestAgentProfile_PublishedAndKeptCurrent(t *testing.T) {
	e := startLearnEnv(t, &learnScript{}, func(o *node.Options) { o.ServiceURL = "wss://relay.example.org" })
	read := func() (*nostr.Event, *nostr.Event) {
		p, _ := fetch(t, e.ac, nostr.Filter{Kinds: []int{0}, Authors: []string{e.agent.pk}})
		r, _ := fetch(t, e.ac, nostr.Filter{Kinds: []int{10002}, Authors: []string{e.agent.pk}})
		if len(p) != 1 || len(r) != 1 {
			t.Fatalf("agent profile events: %d kind 0, %d kind 10002", len(p), len(r))
		}
		return p[0], r[0]
	}
	p, r := read()
	var c struct {
		Name, About  string
		Model        string   `json:"snow:model"`
		Version      string   `json:"snow:version"`
		Capabilities []string `json:"snow:capabilities"`
		Operator     string   `json:"snow:operator"`
	}
	if err := json.Unmarshal([]byte(p.Content), &c); err != nil {
		t.Fatal(err)
	}
	if c.Name != "Snowclaw" || c.About == "" || c.Model != "ollama/test-model" || c.Version != "test" || c.Operator != snowclaw.NpubOf(e.owner.pk) {
		t.Fatalf("agent profile = %s", p.Content)
	}
	if !contains2(c.Capabilities, "learning") || !contains2(c.Capabilities, "chat") {
		t.Fatalf("capabilities = %v", c.Capabilities)
	}
	if got := r.Tags.Find("r"); got == nil || got[1] != "wss://relay.example.org" {
		t.Fatalf("relay list tags = %v", r.Tags)
	}
	// the directory lists it as an agent with its model
	code, body := e.api(&e.owner, "GET", "/api/v1/agents", nil)
	if code != 200 || !strings.Contains(toJSON(body), "ollama/test-model") {
		t.Fatalf("agent directory: %d %v", code, body)
	}
	e.restart()
	e.ac = e.connect(&e.alice)
	p2, r2 := read()
	if p2.ID != p.ID || r2.ID != r.ID {
		t.Fatal("an unchanged profile was published again on restart")
	}
}
