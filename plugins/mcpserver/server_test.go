package mcpserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/mcpserver"
)

// memBackend is an in-memory Backend: these tests cover the tool layer
// (schemas, argument mapping, error results); the relay's own rules are
// tested end to end in relay/mcp_test.go and cmd/snowclaw/mcp_test.go.
type memBackend struct {
	mu       sync.Mutex
	items    map[string]snowclaw.MemoryView
	lastList snowclaw.ListRequest
	lastSrch snowclaw.SearchRequest
	fail     error // returned by every call when set
}

func (b *memBackend) Search(_ context.Context, req snowclaw.SearchRequest) (snowclaw.SearchResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastSrch = req
	if b.fail != nil {
		return snowclaw.SearchResponse{}, b.fail
	}
	out := snowclaw.SearchResponse{Query: req.Query, Results: []snowclaw.SearchHit{}}
	for _, m := range b.items {
		if strings.Contains(m.Text, req.Query) {
			evt := &nostr.Event{ID: m.ID, PubKey: m.Pubkey, Kind: 30078, Tags: nostr.Tags{{"d", "snow:memory:" + m.Topic}}, Content: m.Text}
			out.Results = append(out.Results, snowclaw.SearchHit{Event: evt, Memory: &m})
		}
	}
	return out, nil
}

func (b *memBackend) List(_ context.Context, req snowclaw.ListRequest) ([]snowclaw.MemoryView, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastList = req
	if b.fail != nil {
		return nil, b.fail
	}
	var out []snowclaw.MemoryView
	for _, m := range b.items {
		if req.Tier == "" || m.Tier == req.Tier {
			out = append(out, m)
		}
	}
	return out, nil
}

func (b *memBackend) Get(_ context.Context, id string) (snowclaw.MemoryDetail, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return snowclaw.MemoryDetail{}, b.fail
	}
	m, ok := b.items[id]
	if !ok {
		return snowclaw.MemoryDetail{}, snowclaw.NotFound("no memory %s", id)
	}
	return snowclaw.MemoryDetail{Memory: m, Event: &nostr.Event{ID: id, Kind: 30078, Tags: nostr.Tags{}}}, nil
}

func (b *memBackend) Store(_ context.Context, req snowclaw.StoreRequest) (snowclaw.MemoryView, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return snowclaw.MemoryView{}, b.fail
	}
	if req.Event != nil {
		return snowclaw.MemoryView{}, errors.New("test: a signed event reached the backend")
	}
	sum := sha256.Sum256([]byte(req.Text))
	tier := req.Tier
	if tier == "" {
		tier = snowclaw.TierPrivate
	}
	m := snowclaw.MemoryView{ID: hex.EncodeToString(sum[:]), Topic: req.Topic, Tier: tier, Group: req.Group, Text: req.Text,
		Detail: req.Detail, Tags: req.Tags, Confidence: req.Confidence, CreatedAt: nostr.Now()}
	b.items[m.ID] = m
	return m, nil
}

func (b *memBackend) Forget(_ context.Context, id string) (snowclaw.ForgetResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return snowclaw.ForgetResponse{}, b.fail
	}
	if _, ok := b.items[id]; !ok {
		return snowclaw.ForgetResponse{}, snowclaw.NotFound("no memory %s", id)
	}
	delete(b.items, id)
	return snowclaw.ForgetResponse{Deleted: 1, Message: "forgotten"}, nil
}

// connect serves New(b) over the SDK's in-memory transport and returns a
// client session.
func connect(t *testing.T, b mcpserver.Backend) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(b, "test", slog.New(slog.DiscardHandler)).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call runs a tool and decodes its structured result into out; it
// returns the error text of a tool error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if res.IsError {
		if len(res.Content) == 0 {
			t.Fatalf("%s: error result without content", name)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: decoding %s: %v", name, raw, err)
	}
	return ""
}

func TestTools_ListedWithSchemas(t *testing.T) {
	cs := connect(t, &memBackend{items: map[string]snowclaw.MemoryView{}})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
		if len(tool.Description) < 80 || tool.OutputSchema == nil {
			t.Errorf("%s: description %q, output schema %v", tool.Name, tool.Description, tool.OutputSchema)
		}
	}
	slices.Sort(names)
	if want := []string{"memory_forget", "memory_get", "memory_list", "memory_search", "memory_store"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	raw, _ := json.Marshal(byName["memory_store"].InputSchema)
	var store struct {
		Properties map[string]struct {
			Description string
			Enum        []string
		}
		Required []string
	}
	json.Unmarshal(raw, &store)
	for _, hidden := range []string{"event", "tags"} {
		if _, ok := store.Properties[hidden]; ok {
			t.Errorf("memory_store offers %q: %s", hidden, raw)
		}
	}
	if !slices.Equal(store.Required, []string{"text"}) || store.Properties["text"].Description == "" ||
		!slices.Equal(store.Properties["tier"].Enum, []string{"public", "group", "private", "internal"}) {
		t.Errorf("memory_store input schema: %s", raw)
	}
	if !byName["memory_search"].Annotations.ReadOnlyHint || byName["memory_store"].Annotations.ReadOnlyHint ||
		!*byName["memory_forget"].Annotations.DestructiveHint {
		t.Errorf("annotations: search %+v store %+v forget %+v", byName["memory_search"].Annotations,
			byName["memory_store"].Annotations, byName["memory_forget"].Annotations)
	}
}

// TestTools_RoundTrip: store, search, list, get, forget map their
// arguments onto the API types and their answers back.
func TestTools_RoundTrip(t *testing.T) {
	b := &memBackend{items: map[string]snowclaw.MemoryView{}}
	cs := connect(t, b)

	var stored struct{ Memory snowclaw.MemoryView }
	if msg := call(t, cs, "memory_store", map[string]any{"text": "  the deploy window is friday 14:00  ", "topic": "project/x/decisions",
		"confidence": 0.9}, &stored); msg != "" {
		t.Fatal(msg)
	}
	m := stored.Memory
	if m.Text != "the deploy window is friday 14:00" || m.Topic != "project/x/decisions" || m.Tier != snowclaw.TierPrivate ||
		m.Confidence != 0.9 || len(m.ID) != 64 {
		t.Fatalf("stored %+v", m)
	}

	var found struct {
		Results []map[string]any
	}
	if msg := call(t, cs, "memory_search", map[string]any{"q": "deploy window", "limit": 5, "kinds": []int{30078}}, &found); msg != "" {
		t.Fatal(msg)
	}
	if len(found.Results) != 1 || found.Results[0]["id"] != m.ID || found.Results[0]["text"] != m.Text {
		t.Fatalf("search %+v", found)
	}
	if b.lastSrch.Limit != 5 || !slices.Equal(b.lastSrch.Kinds, []int{30078}) {
		t.Fatalf("search request reached the backend as %+v", b.lastSrch)
	}

	var listed struct{ Memories []snowclaw.MemoryView }
	if msg := call(t, cs, "memory_list", map[string]any{"tier": "private", "topic": "project/", "limit": 10, "include_superseded": true}, &listed); msg != "" {
		t.Fatal(msg)
	}
	if len(listed.Memories) != 1 || listed.Memories[0].ID != m.ID {
		t.Fatalf("list %+v", listed)
	}
	if want := (snowclaw.ListRequest{Tier: "private", Topic: "project/", Limit: 10, IncludeSuperseded: true}); b.lastList != want {
		t.Fatalf("list request reached the backend as %+v", b.lastList)
	}

	var detail snowclaw.MemoryDetail
	if msg := call(t, cs, "memory_get", map[string]any{"id": strings.ToUpper(m.ID)}, &detail); msg != "" {
		t.Fatal(msg)
	}
	if detail.Memory.Text != m.Text || detail.Event.ID != m.ID {
		t.Fatalf("get %+v", detail)
	}

	var forgot snowclaw.ForgetResponse
	if msg := call(t, cs, "memory_forget", map[string]any{"id": m.ID}, &forgot); msg != "" || forgot.Deleted != 1 {
		t.Fatalf("forget: %q %+v", msg, forgot)
	}
	if msg := call(t, cs, "memory_get", map[string]any{"id": m.ID}, &detail); !strings.HasPrefix(msg, "invalid: no ") {
		t.Fatalf("get after forget: %q", msg)
	}
	var empty struct{ Memories []snowclaw.MemoryView }
	if msg := call(t, cs, "memory_list", nil, &empty); msg != "" || empty.Memories == nil || len(empty.Memories) != 0 {
		t.Fatalf("empty list: %q %+v", msg, empty)
	}
}

// TestTools_Errors: every failure is a tool result with IsError and a
// NIP-01 prefix the model can read, never a protocol error.
func TestTools_Errors(t *testing.T) {
	id := strings.Repeat("ab", 32)
	cases := []struct {
		name, tool string
		args       map[string]any
		fail       error
		want       string
	}{
		{"EmptyQuery", "memory_search", map[string]any{"q": "   "}, nil, "invalid: q is empty"},
		{"EmptyAlias", "memory_search", map[string]any{"query": "  "}, nil, "invalid: q is empty"},
		{"QAndQueryDiffer", "memory_search", map[string]any{"q": "deploy", "query": "window"}, nil, "invalid: q and query differ"},
		{"UnknownParameter", "memory_search", map[string]any{"q": "deploy", "text": "window"}, nil, "invalid: "},
		{"MissingQuery", "memory_search", map[string]any{}, nil, "invalid: "},
		{"BadID", "memory_get", map[string]any{"id": "1234"}, nil, "invalid: "},
		{"BadForgetID", "memory_forget", map[string]any{"id": strings.Repeat("zz", 32)}, nil, "invalid: "},
		{"UnknownTier", "memory_store", map[string]any{"text": "x", "tier": "secret"}, nil, "invalid: "},
		{"SignedEvent", "memory_store", map[string]any{"text": "x", "event": map[string]any{"kind": 30078}}, nil, "invalid: "},
		{"Tags", "memory_store", map[string]any{"text": "x", "tags": []string{"a"}}, nil, "invalid: "},
		{"EmptyText", "memory_store", map[string]any{"text": " "}, nil, "invalid: text is empty"},
		{"BackendPrefixKept", "memory_forget", map[string]any{"id": id}, snowclaw.Restricted("only its person, author or the owner may forget it"), "restricted: only its person"},
		{"BackendUnprefixed", "memory_list", nil, errors.New("is the relay running? connection refused"), "error: is the relay running?"},
		{"AuthRequired", "memory_search", map[string]any{"q": "x"}, snowclaw.AuthRequired("sign in"), "auth-required: sign in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs := connect(t, &memBackend{items: map[string]snowclaw.MemoryView{}, fail: c.fail})
			var out any
			msg := call(t, cs, c.tool, c.args, &out)
			t.Logf("%s: %s", c.tool, msg)
			if !strings.HasPrefix(msg, c.want) {
				t.Fatalf("error %q, want prefix %q", msg, c.want)
			}
		})
	}
}

// TestTools_ConcurrentServers: the relay builds a server per request, so
// servers sharing the tool definitions and schema cache are built and
// used at once (run with -race).
func TestTools_ConcurrentServers(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- storeOnce(fmt.Sprintf("concurrent memory %d", i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// storeOnce builds a server and a client and stores text through them.
func storeOnce(text string) error {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(&memBackend{items: map[string]snowclaw.MemoryView{}}, "test", nil).Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_store", Arguments: map[string]any{"text": text}})
	if err != nil {
		return err
	}
	var stored struct{ Memory snowclaw.MemoryView }
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &stored)
	if res.IsError || stored.Memory.Text != text {
		return fmt.Errorf("stored %q (error result %v), want %q", stored.Memory.Text, res.IsError, text)
	}
	return nil
}

// TestCapabilities_StaticTools: the server offers tools whose list never
// changes, and says so (listChanged false; no logging, which it does not
// send). The SDK's default would claim listChanged true.
func TestCapabilities_StaticTools(t *testing.T) {
	cs := connect(t, &memBackend{items: map[string]snowclaw.MemoryView{}})
	caps := cs.InitializeResult().Capabilities
	if caps == nil || caps.Tools == nil {
		t.Fatalf("capabilities %+v: want tools", caps)
	}
	//lint:ignore SA1019 the server must not claim the deprecated logging capability
	if caps.Tools.ListChanged || caps.Logging != nil || caps.Prompts != nil || caps.Resources != nil {
		t.Fatalf("capabilities %+v: want tools only, listChanged false", caps)
	}
}

// TestTools_SearchLeanAndAlias: memory_search takes the query as q or as
// query (the name the MCP inspector and many models use) and answers with
// lean hits: the fields a model needs, the score from the ranking, the
// origin, and neither the event's signature nor its ciphertext.
func TestTools_SearchLeanAndAlias(t *testing.T) {
	const ciphertext = "AgEBAQEBsealed-ciphertext-of-a-group-memory"
	evt := &nostr.Event{ID: strings.Repeat("cd", 32), PubKey: strings.Repeat("ef", 32), Kind: 30078, CreatedAt: 1700000000,
		Tags:    nostr.Tags{{"d", "snow:memory:team/plan"}, {"h", "team"}, {"encrypted", "nip44-group"}, {"snow:key-version", "1"}},
		Content: ciphertext, Sig: strings.Repeat("99", 64)}
	b := &scoredBackend{hits: []snowclaw.SearchHit{
		{Event: evt, Memory: &snowclaw.MemoryView{ID: evt.ID, Topic: "team/plan", Tier: snowclaw.TierGroup, Group: "team",
			Text: "we launch in March", Source: "npub1writer", CreatedAt: evt.CreatedAt},
			Explain: &snowclaw.ExplainRow{Explain: snowclaw.Explain{Final: 0.42, BM25Rank: 1}}},
		{Event: &nostr.Event{ID: strings.Repeat("ab", 32), PubKey: strings.Repeat("ef", 32), Kind: 9, CreatedAt: 1700000001,
			Tags: nostr.Tags{{"h", "team"}}, Content: "see you at the launch", Sig: strings.Repeat("88", 64)},
			Explain: &snowclaw.ExplainRow{Explain: snowclaw.Explain{Final: 0.21}}, Origin: "wss://other.example"},
	}}
	cs := connect(t, b)
	for _, args := range []map[string]any{{"q": "launch"}, {"query": "launch"}, {"q": "launch", "query": "launch"}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%v: %v %+v", args, err, res)
		}
		if b.last.Query != "launch" {
			t.Fatalf("%v reached the backend as %+v", args, b.last)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		for _, leak := range []string{ciphertext, evt.Sig, `"sig"`, `"tags"`, `"explain"`, "bm25_rank"} {
			if strings.Contains(string(raw), leak) {
				t.Fatalf("%v: the answer carries %q: %s", args, leak, raw)
			}
		}
		var out struct {
			Results []map[string]any
		}
		json.Unmarshal(raw, &out)
		want := []map[string]any{
			{"id": evt.ID, "kind": 30078.0, "text": "we launch in March", "tier": "group", "topic": "team/plan", "group": "team",
				"source": "npub1writer", "score": 0.42, "created_at": 1700000000.0, "origin": "local"},
			{"id": strings.Repeat("ab", 32), "kind": 9.0, "text": "see you at the launch", "tier": "group", "group": "team",
				"source": snowclaw.NpubOf(strings.Repeat("ef", 32)), "score": 0.21, "created_at": 1700000001.0, "origin": "wss://other.example"},
		}
		if fmt.Sprint(out.Results) != fmt.Sprint(want) {
			t.Fatalf("%v:\n got %v\nwant %v", args, out.Results, want)
		}
	}
	// the breakdown only when asked
	var asked struct{ Results []map[string]any }
	if msg := call(t, cs, "memory_search", map[string]any{"query": "launch", "explain": true}, &asked); msg != "" || asked.Results[0]["explain"] == nil {
		t.Fatalf("explain asked: %q %v", msg, asked)
	}
	// the schema says q is the parameter and query its alias
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "memory_search" {
			continue
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(raw), `"query":{"description":"an alias of q`) || !strings.Contains(tool.Description, `"query" is accepted as an alias`) {
			t.Fatalf("memory_search documents no alias: %s\n%s", tool.Description, raw)
		}
	}
}

// scoredBackend answers every search with hits, as the relay does with
// the breakdown asked for.
type scoredBackend struct {
	memBackend
	hits []snowclaw.SearchHit
	last snowclaw.SearchRequest
}

func (b *scoredBackend) Search(_ context.Context, req snowclaw.SearchRequest) (snowclaw.SearchResponse, error) {
	b.last = req
	return snowclaw.SearchResponse{Query: req.Query, Results: b.hits}, nil
}
