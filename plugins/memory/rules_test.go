package memory

import (
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Socket-free tables for the pure rules of the service; the end-to-end
// tests over a real relay (relay/*_test.go) cover the rest.

func TestPreferenceList(t *testing.T) {
	alice := strings.Repeat("a", 64)
	bob := strings.Repeat("b", 64)
	npubA := snowclaw.NpubOf(alice)
	cases := []struct {
		name    string
		content string
		tags    nostr.Tags
		want    []string
		wantErr string
	}{
		{"no key", `{"respond_mode":"mention"}`, nil, nil, ""},
		{"null", `{"source_preference":null}`, nil, nil, ""},
		{"empty clears", `{"source_preference":[]}`, nil, []string{}, ""},
		{"npub and group, deduplicated", `{"source_preference":["` + npubA + `","group:team","` + alice + `"]}`, nil, []string{alice, "group:team"}, ""},
		{"tag wins over content", `{"source_preference":["` + alice + `"]}`, nostr.Tags{{"source_preference", bob}}, []string{bob}, ""},
		{"content not JSON carries none", `not json`, nil, nil, ""},
		{"not an array", `{"source_preference":"` + alice + `"}`, nil, nil, "must be a JSON array"},
		{"bad entry", `{"source_preference":["nobody"]}`, nil, nil, "entry 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evt := &nostr.Event{Kind: snowclaw.KindAppData, Content: c.content, Tags: append(nostr.Tags{{"d", snowclaw.DTagConfigGlobal}}, c.tags...)}
			got, err := preferenceList(evt)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (c.want == nil) || !slices.Equal(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestRejectBadPreference(t *testing.T) {
	s := &Service{}
	bad := &nostr.Event{Kind: snowclaw.KindAppData, Content: `{"source_preference":"x"}`, Tags: nostr.Tags{{"d", snowclaw.DTagConfigGlobal}}}
	if err := s.RejectBadPreference(t.Context(), snowclaw.ReadEvent(bad)); snowclaw.ReasonOf(err) != snowclaw.ReasonInvalid {
		t.Fatalf("unreadable list: %v, want an invalid refusal", err)
	}
	other := &nostr.Event{Kind: snowclaw.KindAppData, Content: `{"source_preference":"x"}`, Tags: nostr.Tags{{"d", "snowclaw:config:group:x"}}}
	if err := s.RejectBadPreference(t.Context(), snowclaw.ReadEvent(other)); err != nil {
		t.Fatalf("another config event: %v", err)
	}
}

func TestListMatcher(t *testing.T) {
	alice := strings.Repeat("a", 64)
	mem := func(topic string, tags ...nostr.Tag) *nostr.Event {
		return &nostr.Event{Kind: snowclaw.KindAppData, PubKey: alice, CreatedAt: 100,
			Tags: append(nostr.Tags{{"d", snowclaw.PrefixMemoryItem + topic}}, tags...)}
	}
	pub := mem("work/deploy", nostr.Tag{"snow:tier", "public"})
	grp := mem("work/standup", nostr.Tag{"snow:tier", "group"}, nostr.Tag{"h", "team"})
	cases := []struct {
		name    string
		req     snowclaw.ListRequest
		match   []*nostr.Event
		miss    []*nostr.Event
		limit   int
		wantErr snowclaw.Reason
	}{
		{"no filter", snowclaw.ListRequest{}, []*nostr.Event{pub, grp}, nil, defaultListLimit, 0},
		{"tier", snowclaw.ListRequest{Tier: snowclaw.TierGroup}, []*nostr.Event{grp}, []*nostr.Event{pub}, defaultListLimit, 0},
		{"topic prefix, with or without the namespace", snowclaw.ListRequest{Topic: snowclaw.PrefixMemoryItem + "work/dep"}, []*nostr.Event{pub}, []*nostr.Event{grp}, defaultListLimit, 0},
		{"group", snowclaw.ListRequest{Group: "team"}, []*nostr.Event{grp}, []*nostr.Event{pub}, defaultListLimit, 0},
		{"until", snowclaw.ListRequest{Until: 99}, nil, []*nostr.Event{pub}, defaultListLimit, 0},
		{"source as npub", snowclaw.ListRequest{Source: snowclaw.NpubOf(alice)}, []*nostr.Event{pub}, nil, defaultListLimit, 0},
		{"limit capped", snowclaw.ListRequest{Limit: 10_000}, nil, nil, maxListLimit, 0},
		{"bad tier", snowclaw.ListRequest{Tier: "secret"}, nil, nil, 0, snowclaw.ReasonInvalid},
		{"bad source", snowclaw.ListRequest{Source: "nobody"}, nil, nil, 0, snowclaw.ReasonInvalid},
		{"negative", snowclaw.ListRequest{Limit: -1}, nil, nil, 0, snowclaw.ReasonInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			match, limit, err := listMatcher(c.req)
			if c.wantErr != 0 {
				if snowclaw.ReasonOf(err) != c.wantErr || err == nil {
					t.Fatalf("err %v, want reason %s", err, c.wantErr)
				}
				return
			}
			if err != nil || limit != c.limit {
				t.Fatalf("limit %d err %v, want %d", limit, err, c.limit)
			}
			for _, e := range c.match {
				if !match(e) {
					t.Errorf("%s not matched", e.Tags.GetD())
				}
			}
			for _, e := range c.miss {
				if match(e) {
					t.Errorf("%s matched", e.Tags.GetD())
				}
			}
		})
	}
}

func TestAgentProfile(t *testing.T) {
	op := strings.Repeat("c", 64)
	cases := []struct {
		name    string
		content string
		tags    nostr.Tags
		want    AgentEntry
		isAgent bool
	}{
		{"content", `{"name":"studio","snow:model":"m/1","snow:version":"0.1","snow:capabilities":["chat","search"],"snow:operator":"` + op + `"}`, nil,
			AgentEntry{Name: "studio", Model: "m/1", Version: "0.1", Capabilities: []string{"chat", "search"}, Operator: snowclaw.NpubOf(op)}, true},
		{"tags win", `{"display_name":"d","snow:model":"m/1"}`, nostr.Tags{{"snow:model", "m/2"}, {"snow:capabilities", "a", "b"}},
			AgentEntry{Name: "d", Model: "m/2", Capabilities: []string{"a", "b"}}, true},
		{"one capability as a string", `{"snow:model":"m","snow:capabilities":"chat"}`, nil, AgentEntry{Model: "m", Capabilities: []string{"chat"}}, true},
		{"a person, not an agent", `{"name":"alice"}`, nil, AgentEntry{Name: "alice"}, false},
		{"not JSON, tags only", `hello`, nostr.Tags{{"snow:model", "m"}}, AgentEntry{Model: "m"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := agentProfile(&nostr.Event{Kind: snowclaw.KindProfile, Content: c.content, Tags: c.tags})
			if ok != c.isAgent || got.Name != c.want.Name || got.Model != c.want.Model || got.Version != c.want.Version ||
				got.Operator != c.want.Operator || !slices.Equal(got.Capabilities, c.want.Capabilities) {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, c.want, c.isAgent)
			}
		})
	}
}
