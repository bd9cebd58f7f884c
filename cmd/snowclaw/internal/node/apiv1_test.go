package node_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw"
)

// v1 calls the API as u (nil: unsigned) and decodes a successful JSON
// answer into out; it returns the status and the error message, if any.
func (e *testEnv) v1(u *user, method, path string, body, out any) (int, string) {
	e.t.Helper()
	code, m := e.api(u, method, path, body)
	if out != nil && code < 300 {
		if err := json.Unmarshal([]byte(mustJSON(m)), out); err != nil {
			e.t.Fatalf("%s %s: decoding %s: %v", method, path, mustJSON(m), err)
		}
	}
	msg, _ := m["error"].(string)
	return code, msg
}

type memoryList struct {
	Memories []snowclaw.MemoryView `json:"memories"`
}

func (e *testEnv) list(u *user, query string) []snowclaw.MemoryView {
	e.t.Helper()
	var l memoryList
	if code, msg := e.v1(u, "GET", "/api/v1/memories"+query, nil, &l); code != 200 {
		e.t.Fatalf("list %q: %d %s", query, code, msg)
	}
	return l.Memories
}

func (e *testEnv) searchAPI(u *user, q string, extra string) snowclaw.SearchResponse {
	e.t.Helper()
	var res snowclaw.SearchResponse
	if code, msg := e.v1(u, "GET", "/api/v1/search?q="+url.QueryEscape(q)+extra, nil, &res); code != 200 {
		e.t.Fatalf("search %q: %d %s", q, code, msg)
	}
	return res
}

func (e *testEnv) storeText(u *user, req snowclaw.StoreRequest) (snowclaw.MemoryView, int, string) {
	e.t.Helper()
	var out struct {
		Memory snowclaw.MemoryView `json:"memory"`
	}
	code, msg := e.v1(u, "POST", "/api/v1/memories", req, &out)
	return out.Memory, code, msg
}

func memoryAt(u user, at nostr.Timestamp, topic, content string, extra ...nostr.Tag) nostr.Event {
	evt := nostr.Event{Kind: 30078, CreatedAt: at, Tags: append(nostr.Tags{{"d", "snow:memory:" + topic}}, extra...), Content: content}
	if err := evt.Sign(u.sk); err != nil {
		panic(err)
	}
	return evt
}

func viewIDs(ms []snowclaw.MemoryView) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func findView(ms []snowclaw.MemoryView, id string) (snowclaw.MemoryView, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return snowclaw.MemoryView{}, false
}

func hitFor(res snowclaw.SearchResponse, id string) (snowclaw.SearchHit, bool) {
	for _, h := range res.Results {
		if h.Event != nil && h.Event.ID == id {
			return h, true
		}
	}
	return snowclaw.SearchHit{}, false
}

func TestAPIv1_RefusesWithoutAuth(t *testing.T) {
	e := startAgentEnv(t)
	id := strings.Repeat("ab", 32)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/search?q=launch"},
		{"GET", "/api/v1/memories"},
		{"GET", "/api/v1/memories/" + id},
		{"POST", "/api/v1/memories"},
		{"DELETE", "/api/v1/memories/" + id},
		{"GET", "/api/v1/export"},
		{"GET", "/metrics"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			code, msg := e.v1(nil, c.method, c.path, nil, nil)
			if code != http.StatusUnauthorized || !strings.HasPrefix(msg, "auth-required:") {
				t.Fatalf("unsigned: %d %q, want 401 auth-required", code, msg)
			}
		})
	}
	// a signature for another URL is no signature
	req, _ := http.NewRequest("GET", e.httpURL("/api/v1/memories"), nil)
	req.Header.Set("Authorization", e.nip98(e.alice, "GET", e.httpURL("/api/v1/search?q=x")))
	if resp := do(t, req); resp.code != http.StatusUnauthorized {
		t.Fatalf("signature for another URL: %d", resp.code)
	}

	var h map[string]any
	if code, _ := e.v1(nil, "GET", "/api/v1/health", nil, &h); code != 200 {
		t.Fatalf("health: %d", code)
	}
	if h["status"] != "ok" || h["version"] != "test" || h["agent"] != e.agent.pk || h["relay"] != e.relay.pk || h["owner"] != e.owner.pk || h["you"] != nil {
		t.Fatalf("public health: %v", h)
	}
	e.mustPublish(e.ac, memory(e.alice, "fact/alice", `{"summary":"alice likes tea"}`))
	if code, _ := e.v1(&e.alice, "GET", "/api/v1/health", nil, &h); code != 200 || h["you"] != e.alice.pk {
		t.Fatalf("signed health: %d %v", code, h)
	}
	if counts, _ := h["counts"].(map[string]any); counts == nil || counts["memories"] != float64(1) {
		t.Fatalf("signed health counts: %v", h["counts"])
	}

	// CORS: preflight without credentials, and the header on answers
	req, _ = http.NewRequest("OPTIONS", e.httpURL("/api/v1/memories"), nil)
	req.Header.Set("Origin", "https://ui.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp := do(t, req)
	if resp.code != http.StatusNoContent || resp.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(resp.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", resp.code, resp.header)
	}
	req, _ = http.NewRequest("GET", e.httpURL("/api/v1/memories"), nil)
	if resp := do(t, req); resp.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("no CORS header on a 401: %v", resp.header)
	}
}

func TestAPIv1_SearchGroupMemoryMembersOnly(t *testing.T) {
	e := startAgentEnv(t)
	carol := newUser()
	g := e.mustPublish(e.ac, memory(e.alice, "group/agentroom/launch", `{"summary":"The launch window opens on the ninth of March"}`, nostr.Tag{"h", agentGroup}))

	hit, ok := hitFor(e.searchAPI(&e.bob, "launch window march", ""), g.ID)
	if !ok || hit.Memory == nil || hit.Memory.Text != "The launch window opens on the ninth of March" || hit.Memory.Tier != snowclaw.TierGroup || hit.Memory.Group != agentGroup {
		t.Fatalf("member's search: %s", mustJSON(hit))
	}
	if hit.Explain != nil {
		t.Fatalf("explain without asking: %v", hit.Explain)
	}
	if res := e.searchAPI(&carol, "launch window march", ""); len(res.Results) != 0 {
		t.Fatalf("non-member finds %d results: %s", len(res.Results), mustJSON(res))
	}

	res := e.searchAPI(&e.alice, "launch window", "&explain=1&kinds=30078&limit=5")
	hit, ok = hitFor(res, g.ID)
	if !ok {
		t.Fatalf("explain search lost the hit: %s", mustJSON(res))
	}
	if ex := hit.Explain; ex == nil || ex.ID != g.ID || ex.Final <= 0 || ex.BM25Rank == 0 || ex.Fused <= 0 || ex.Trust <= 0 {
		t.Fatalf("explain row: %s", mustJSON(hit.Explain))
	}
	if res := e.searchAPI(&e.alice, "launch window", "&kinds=9"); len(res.Results) != 0 {
		t.Fatalf("kinds=9 still finds the memory: %s", mustJSON(res))
	}
	if code, msg := e.v1(&e.alice, "GET", "/api/v1/search?q=", nil, nil); code != 400 || !strings.HasPrefix(msg, "invalid:") {
		t.Fatalf("empty query: %d %q", code, msg)
	}
	if code, _ := e.v1(&e.alice, "GET", "/api/v1/search?q=x&kinds=chat", nil, nil); code != 400 {
		t.Fatalf("bad kinds: %d", code)
	}
}

func TestAPIv1_PrivateTextForItsPersonOnly(t *testing.T) {
	e := startAgentEnv(t)
	mv, code, msg := e.storeText(&e.alice, snowclaw.StoreRequest{Text: "my locker code is 4417", Topic: "user/alice/locker"})
	if code != http.StatusCreated {
		t.Fatalf("store: %d %s", code, msg)
	}
	if mv.Tier != snowclaw.TierPrivate || mv.Person != e.alice.pk || mv.Pubkey != e.agent.pk || mv.Text != "my locker code is 4417" || mv.Encrypted || !strings.HasPrefix(mv.Topic, "user/alice/locker/") {
		t.Fatalf("stored view: %s", mustJSON(mv))
	}
	// alice also writes one herself, encrypted to the agent
	ck, _ := nip44.GenerateConversationKey(e.agent.pk, e.alice.sk)
	ct, _ := nip44.Encrypt(`{"summary":"my bike lock is 9012"}`, ck)
	own := e.mustPublish(e.ac, memory(e.alice, "user/alice/bike", ct, nostr.Tag{"p", e.alice.pk}, nostr.Tag{"encrypted", "nip44"}))

	mine := e.list(&e.alice, "")
	if got, ok := findView(mine, mv.ID); !ok || got.Text != "my locker code is 4417" {
		t.Fatalf("alice's list: %s", mustJSON(mine))
	}
	if got, ok := findView(mine, own.ID); !ok || got.Text != "my bike lock is 9012" || got.Encrypted {
		t.Fatalf("alice's own encrypted memory: %s", mustJSON(got))
	}
	if theirs := e.list(&e.bob, ""); slices.Contains(viewIDs(theirs), mv.ID) || slices.Contains(viewIDs(theirs), own.ID) {
		t.Fatalf("bob lists alice's private memories: %s", mustJSON(theirs))
	}
	if code, msg := e.v1(&e.bob, "GET", "/api/v1/memories/"+mv.ID, nil, nil); code != http.StatusNotFound || !strings.HasPrefix(msg, "invalid: no such memory") {
		t.Fatalf("bob gets alice's memory: %d %q", code, msg)
	}
	// the relay key reads every event, but is not the person: no text
	var d snowclaw.MemoryDetail
	if code, msg := e.v1(&e.relay, "GET", "/api/v1/memories/"+mv.ID, nil, &d); code != 200 {
		t.Fatalf("relay key get: %d %s", code, msg)
	}
	// the secret as written: its digits alone may stand in any id, key
	// or ciphertext by chance
	if d.Memory.Text != "" || !d.Memory.Encrypted || strings.Contains(mustJSON(d), "code is 4417") {
		t.Fatalf("text shown to a reader who is not the person: %s", mustJSON(d.Memory))
	}
	if hit, ok := hitFor(e.searchAPI(&e.alice, "locker code", ""), mv.ID); !ok || hit.Memory == nil || hit.Memory.Text != "my locker code is 4417" {
		t.Fatalf("alice's search: %s", mustJSON(hit))
	}
	if res := e.searchAPI(&e.bob, "locker code 4417", ""); strings.Contains(mustJSON(res.Results), mv.ID) || strings.Contains(mustJSON(res.Results), "code is 4417") {
		t.Fatalf("bob's search: %s", mustJSON(res))
	}
}

// Raw HTTP for the tests that look at headers or send their own auth.

type rawResp struct {
	code   int
	header http.Header
	body   string
}

func do(t *testing.T, req *http.Request) rawResp {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return rawResp{resp.StatusCode, resp.Header, b.String()}
}

func (e *testEnv) httpURL(path string) string {
	return "http" + strings.TrimPrefix(e.url, "ws") + path
}

// nip98 is the Authorization header of u for method and url.
func (e *testEnv) nip98(u user, method, full string) string {
	auth := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"u", full}, {"method", method}, nonceTag()}}
	auth.Sign(u.sk)
	raw, _ := json.Marshal(auth)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}
