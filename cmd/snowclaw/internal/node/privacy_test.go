package node_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// api calls the relay's HTTP API signed by u (NIP-98); nil u sends no
// Authorization. It returns the status and the decoded JSON body.
func (e *testEnv) api(u *user, method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	full := "http" + strings.TrimPrefix(e.url, "ws") + path
	var payload []byte
	if body != nil {
		payload, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, full, bytes.NewReader(payload))
	if u != nil {
		auth := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"u", full}, {"method", method}, nonceTag()}}
		if len(payload) > 0 {
			sum := sha256.Sum256(payload)
			auth.Tags = append(auth.Tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
		}
		auth.Sign(u.sk)
		raw, _ := json.Marshal(auth)
		req.Header.Set("Authorization", "Nostr "+base64.StdEncoding.EncodeToString(raw))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if json.Unmarshal(raw, &out) != nil {
		var list []any
		if json.Unmarshal(raw, &list) == nil {
			out["list"] = list
		}
		out["raw"] = string(raw)
	}
	return resp.StatusCode, out
}

// dm sends a private message to the agent and waits for its private
// answer (the agent answers rights commands without a model).
func (e *agentEnv) dm(u user, text string) string {
	e.t.Helper()
	wrap, err := privmsg.Wrap(context.Background(), u.sk, e.agent.pk, text, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	c := e.connect(&u)
	before := map[string]bool{}
	evs, _ := fetch(e.t, c, nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {u.pk}}})
	for _, w := range evs {
		before[w.ID] = true
	}
	e.mustPublish(c, wrap)
	var answer string
	testwait.For(e.t, fmt.Sprintf("a private answer to %q", text), func() bool {
		evs, _ := fetch(e.t, c, nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {u.pk}}})
		for _, w := range evs {
			if before[w.ID] {
				continue
			}
			if m, err := privmsg.Unwrap(context.Background(), w, u.sk); err == nil && m.From == e.agent.pk {
				answer = m.Content
				return true
			}
		}
		return false
	})
	return answer
}

// TestPrivacy_CanaryStaysInRAM: a private memory is recalled by the agent
// and decrypted by its person with their own key, while nothing on disk
// (store, index, logs, audit) holds its text.
func TestPrivacy_CanaryStaysInRAM(t *testing.T) {
	logs := new(syncBuffer)
	e := startAgentEnv(t, func(o *node.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	const canary = "zebra-quartz-7781"
	if ans := e.dm(e.alice, "Snowclaw, remember that my canary phrase is "+canary); ans == "" {
		t.Fatal("no answer")
	}
	// recalled (through the index, RAM part) into a later private prompt
	e.dm(e.alice, "what is my canary phrase?")
	if p := e.llm.LastPrompt(); !strings.Contains(p, canary) {
		t.Fatalf("the private memory was not recalled:\n%s", p)
	}
	// alice decrypts it with her own key
	evs, _ := fetch(t, e.ac, nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"p": {e.alice.pk}}})
	found := false
	for _, ev := range evs {
		ck, _ := nip44.GenerateConversationKey(e.agent.pk, e.alice.sk)
		if plain, err := nip44.Decrypt(ev.Content, ck); err == nil && strings.Contains(plain, canary) {
			found = true
		}
	}
	if !found {
		t.Fatalf("alice cannot decrypt her memory from %d events", len(evs))
	}
	// bob finds nothing of it by REQ, COUNT or search
	if evs, _ := fetch(t, e.bc, nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"p": {e.alice.pk}}}); len(evs) != 0 {
		t.Fatalf("bob reads %d of alice's private events", len(evs))
	}
	for _, ev := range mustFetch(t, e.bc, nostr.Filter{Search: "canary phrase " + canary}) {
		if hasTag(ev, "p", e.alice.pk) || strings.Contains(ev.Content, canary) {
			t.Fatalf("bob's search finds alice's private memory: %s", mustJSON(ev))
		}
	}
	if n, _ := count(t, e.bc, nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"p": {e.alice.pk}}}); n != 0 {
		t.Fatalf("bob counts %d", n)
	}
	e.stop()
	if files := grepDir(t, e.dir, canary); len(files) > 0 {
		t.Fatalf("canary on disk: %v", files)
	}
	if strings.Contains(logs.String(), canary) {
		t.Fatal("canary in the logs")
	}
}

// TestPrivacy_ExportIsPersonal: each person's export holds their data and
// none of anybody else's; nobody exports somebody else.
func TestPrivacy_ExportIsPersonal(t *testing.T) {
	e := startAgentEnv(t)
	e.dm(e.alice, "Snowclaw, remember that my sister is called Ingrid")
	e.dm(e.bob, "Snowclaw, remember that I collect stamps")
	e.say(e.ac, e.alice, "alice says hello to the group")
	code, x := e.api(&e.alice, "GET", "/api/v1/export", nil)
	if code != 200 || !strings.Contains(mustJSON(x), "Ingrid") || !strings.Contains(mustJSON(x), "alice says hello") {
		t.Fatalf("alice's export (%d): %s", code, mustJSON(x))
	}
	if x["export_version"] != "1.0" || x["categories"] == nil {
		t.Fatalf("export shape: %s", mustJSON(x))
	}
	code, x = e.api(&e.bob, "GET", "/api/v1/export", nil)
	if code != 200 || strings.Contains(mustJSON(x), "Ingrid") || strings.Contains(mustJSON(x), "alice says hello") || !strings.Contains(mustJSON(x), "stamps") {
		t.Fatalf("bob's export (%d) holds alice's data or lacks his: %s", code, mustJSON(x))
	}
	aliceNpub, _ := nip19.EncodePublicKey(e.alice.pk)
	if code, _ := e.api(&e.bob, "GET", "/api/v1/export?npub="+aliceNpub, nil); code != http.StatusForbidden {
		t.Fatalf("bob exporting alice: %d, want 403", code)
	}
	if code, _ := e.api(nil, "GET", "/api/v1/export", nil); code != http.StatusUnauthorized {
		t.Fatalf("anonymous export: %d, want 401", code)
	}
	if code, x := e.api(&e.owner, "GET", "/api/v1/export?npub="+aliceNpub, nil); code != 200 || !strings.Contains(mustJSON(x), "Ingrid") {
		t.Fatalf("owner exporting alice: %d", code)
	}
	if ans := e.dm(e.alice, "export my data"); !strings.Contains(ans, "Ingrid") {
		t.Fatalf("export over a private message: %q", ans)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func mustFetch(t *testing.T, c *wsclient.Client, f nostr.Filter) []*nostr.Event {
	t.Helper()
	evs, closed := fetch(t, c, f)
	if closed != "" {
		t.Fatalf("REQ %v closed: %s", f, closed)
	}
	return evs
}
