package node_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw"
)

// TestMemoryViews_OneReading is the bug of the four decoders: one memory
// read one way by the list, another by the export and a third by the
// search index. The same content must say the same in every view, whether
// it is stored in clear or encrypted, and a memory the list decrypts must
// be found by search.
func TestMemoryViews_OneReading(t *testing.T) {
	e := startAgentEnv(t)
	seal := func(sk, peer, plain string) string {
		ck, err := nip44.GenerateConversationKey(peer, sk)
		if err != nil {
			t.Fatal(err)
		}
		ct, err := nip44.Encrypt(plain, ck)
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	private := []nostr.Tag{{"p", e.alice.pk}, {"encrypted", "nip44"}}
	// a detail without a summary: the detail is the summary (docs/events.md)
	clear := e.mustPublish(e.ac, memory(e.alice, "user/alice/clear", `{"detail":"quokka habits"}`))
	sealed := e.mustPublish(e.ac, memory(e.alice, "user/alice/sealed", seal(e.alice.sk, e.agent.pk, `{"detail":"wombat habits"}`), private...))
	// an empty summary beside a context: readable, just without a summary
	ctx := e.mustPublish(e.ac, memory(e.alice, "user/alice/ctx", seal(e.alice.sk, e.agent.pk, `{"summary":"","context":"numbat burrow"}`), private...))
	// the agent's private record of alice in the older form, encrypted to
	// the agent itself (docs/events.md#older-forms-still-read): the list decrypts it for alice, so search must
	// find it for her too
	ag := e.connect(&e.agent)
	legacy := e.mustPublish(ag, memory(e.agent, "user/alice/legacy", seal(e.agent.sk, e.agent.pk, `{"summary":"platypus lore"}`), private...))

	list := e.list(&e.alice, "")
	want := map[string]snowclaw.MemoryView{
		clear.ID:  {Text: "quokka habits"},
		sealed.ID: {Text: "wombat habits"},
		ctx.ID:    {Context: "numbat burrow"},
		legacy.ID: {Text: "platypus lore"},
	}
	for id, w := range want {
		got, ok := findView(list, id)
		if !ok || got.Text != w.Text || got.Detail != "" || got.Context != w.Context || got.Encrypted {
			t.Errorf("list view of %s: %s; want text %q, context %q, not encrypted", id[:8], mustJSON(got), w.Text, w.Context)
		}
		var d snowclaw.MemoryDetail
		if code, msg := e.v1(&e.alice, "GET", "/api/v1/memories/"+id, nil, &d); code != 200 || d.Memory.Text != got.Text || d.Memory.Encrypted != got.Encrypted {
			t.Errorf("get view of %s: %d %s %s; list said %s", id[:8], code, msg, mustJSON(d.Memory), mustJSON(got))
		}
	}
	for q, id := range map[string]string{"quokka": clear.ID, "wombat": sealed.ID, "numbat": ctx.ID, "platypus": legacy.ID} {
		hit, ok := hitFor(e.searchAPI(&e.alice, q, ""), id)
		if !ok || hit.Memory == nil {
			t.Errorf("search %q does not find %s", q, id[:8])
			continue
		}
		if lv, _ := findView(list, id); hit.Memory.Text != lv.Text || hit.Memory.Encrypted != lv.Encrypted {
			t.Errorf("search view of %s: %s; list said %s", id[:8], mustJSON(hit.Memory), mustJSON(lv))
		}
	}
	var x map[string]any
	if code, msg := e.v1(&e.alice, "GET", "/api/v1/export?format=json", nil, &x); code != 200 {
		t.Fatalf("export: %d %s", code, msg)
	}
	exp := mustJSON(x)
	for _, raw := range []string{`detail\":`, `summary\":`, "encrypted;"} {
		if strings.Contains(exp, raw) {
			t.Errorf("the export shows %s where the list shows the text: %s", raw, exp)
		}
	}
	for _, words := range []string{"quokka habits", "wombat habits", "numbat burrow", "platypus lore"} {
		if !strings.Contains(exp, words) {
			t.Errorf("the export lacks %q: %s", words, exp)
		}
	}
}
