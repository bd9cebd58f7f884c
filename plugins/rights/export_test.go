package rights

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

var exportNow = time.Date(2026, 4, 15, 10, 0, 0, 0, time.UTC)

// stored encodes and signs a record the way the agent stores it.
func stored(t *testing.T, codec *memory.Codec, sk string, r memory.Record) *nostr.Event {
	t.Helper()
	evt, err := codec.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := evt.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return &evt
}

func TestExport_JSONShape(t *testing.T) {
	_, alice, aliceNpub := newKey(t)
	x := NewExport(alice, exportNow) // hex in, npub out
	x.AddMessage(memory.HistoryMessage{Pubkey: alice, Content: "hello", EventID: fakeID("m1"), Group: "g1", Kind: 9, Timestamp: exportNow.Unix() - 60})
	x.AddItem(memory.Item{ID: "abc123abc123", Topic: "project/x/notes/abc123abc123", Text: "Ships in May", Tier: snowclaw.TierPublic, Source: memory.SourceExplicit, CreatedAt: exportNow.Unix() - 30}, "")

	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"export_version": "1.0", "user_id": aliceNpub, "exported_at": "2026-04-15T10:00:00Z", "record_count": 2.0}
	for k, v := range want {
		if doc[k] != v {
			t.Errorf("%s = %v, want %v", k, doc[k], v)
		}
	}
	cats, _ := doc["categories"].(map[string]any)
	tests := []struct {
		category string
		count    float64
	}{
		{CategoryConversation, 1}, {CategoryPreference, 0}, {CategoryLearnedContext, 1}, {CategoryWorkPattern, 0}, {CategoryProfile, 0},
	}
	for _, tc := range tests {
		t.Run(tc.category, func(t *testing.T) {
			c, ok := cats[tc.category].(map[string]any)
			if !ok {
				t.Fatalf("category %q missing in %s", tc.category, b)
			}
			recs, ok := c["records"].([]any)
			if c["count"] != tc.count || !ok || float64(len(recs)) != tc.count {
				t.Fatalf("count = %v, records = %v; want %v of each", c["count"], c["records"], tc.count)
			}
			for _, r := range recs {
				rec := r.(map[string]any)
				for _, key := range []string{"memory_id", "content", "created_at"} {
					if _, ok := rec[key]; !ok {
						t.Errorf("record lacks %q: %v", key, rec)
					}
				}
			}
		})
	}
	conv := cats[CategoryConversation].(map[string]any)["records"].([]any)[0].(map[string]any)
	if conv["memory_id"] != fakeID("m1") || conv["content"] != "hello" || conv["group"] != "g1" || conv["source"] != "user" {
		t.Errorf("conversation record = %v", conv)
	}
	lc := cats[CategoryLearnedContext].(map[string]any)["records"].([]any)[0].(map[string]any)
	if tags, _ := lc["topic_tags"].([]any); len(tags) != 1 || tags[0] != "project" || lc["topic"] != "project/x/notes/abc123abc123" {
		t.Errorf("learned_context record = %v", lc)
	}
}

func TestExport_Dedupe(t *testing.T) {
	agentSK, agentPK, _ := newKey(t)
	_, alice, _ := newKey(t)
	codec, err := memory.NewCodec(agentSK)
	if err != nil {
		t.Fatal(err)
	}
	item := memory.Item{ID: "0a0a0a0a0a0a", Topic: "user/alice/preferences/0a0a0a0a0a0a", Text: "Prefers bullet points", Tier: snowclaw.TierPrivate, Subject: alice, Source: memory.SourceExplicit, CreatedAt: exportNow.Unix() - 100}
	evt := stored(t, codec, agentSK, memory.Record{Item: &item, CreatedAt: item.CreatedAt})
	fresh := item
	fresh.Text = "Prefers short bullet points" // changed in RAM, not flushed yet
	chat := &nostr.Event{ID: fakeID("chat"), PubKey: alice, Kind: 9, CreatedAt: nostr.Timestamp(exportNow.Unix() - 50), Tags: nostr.Tags{{"h", "g"}}, Content: "hi all"}
	msg := memory.HistoryMessage{Pubkey: alice, EventID: chat.ID, Content: "hi all", Group: "g", Kind: 9, Timestamp: int64(chat.CreatedAt)}

	tests := []struct {
		name        string
		add         func(x *Export)
		wantCount   int
		wantID      string
		wantContent string
	}{
		{"item with its event id, then event", func(x *Export) { x.AddItem(item, evt.ID); x.AddEvent(evt, item.Text) }, 1, evt.ID, item.Text},
		{"event, then item with its event id", func(x *Export) { x.AddEvent(evt, item.Text); x.AddItem(item, evt.ID) }, 1, evt.ID, item.Text},
		{"unflushed item and older event share a d tag", func(x *Export) { x.AddItem(fresh, ""); x.AddEvent(evt, item.Text) }, 1, evt.ID, fresh.Text},
		{"event first, RAM item wins", func(x *Export) { x.AddEvent(evt, item.Text); x.AddItem(fresh, "") }, 1, evt.ID, fresh.Text},
		{"same item twice", func(x *Export) { x.AddItem(item, ""); x.AddItem(item, "") }, 1, item.ID, item.Text},
		{"message and its event", func(x *Export) { x.AddMessage(msg); x.AddEvent(chat, "") }, 1, chat.ID, "hi all"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := NewExport(alice, exportNow)
			x.Agent = agentPK
			tc.add(x)
			var all []ExportRecord
			for _, c := range x.Categories {
				all = append(all, c.Records...)
				if c.Count != len(c.Records) {
					t.Errorf("Count %d != %d records", c.Count, len(c.Records))
				}
			}
			if len(all) != tc.wantCount || x.RecordCount != tc.wantCount {
				t.Fatalf("%d records (RecordCount %d), want %d: %+v", len(all), x.RecordCount, tc.wantCount, all)
			}
			if all[0].MemoryID != tc.wantID || all[0].Content != tc.wantContent {
				t.Errorf("record = %+v, want id %s content %q", all[0], tc.wantID, tc.wantContent)
			}
		})
	}
}

func TestExport_CategoriesAndGuards(t *testing.T) {
	agentSK, agent, _ := newKey(t)
	aliceSK, alice, aliceNpub := newKey(t)
	bobSK, bob, _ := newKey(t)
	codec, err := memory.NewCodec(agentSK)
	if err != nil {
		t.Fatal(err)
	}
	npubRec := memory.Npub{Pubkey: alice, DisplayNames: []memory.DisplayName{{Name: "Alice", At: 100}}, FirstSeen: 100, Notes: []string{"works on Rust"}, OwnerNotes: []string{"trusted"}, Preferences: map[string]string{"language": "it"}}
	npubEvt := stored(t, codec, agentSK, memory.Record{Npub: &npubRec})
	toBob := stored(t, codec, agentSK, memory.Record{Item: &memory.Item{ID: "b0b0b0b0b0b0", Topic: "user/bob/notes/b0b0b0b0b0b0", Text: "Bob's secret", Tier: snowclaw.TierPrivate, Subject: bob}})
	aliceWrote := &nostr.Event{ID: fakeID("dm"), PubKey: alice, Kind: 30078, Tags: nostr.Tags{{"d", "snow:memory:fact/x"}, {"encrypted", "nip44"}}, Content: "cipher"}
	if err := aliceWrote.Sign(aliceSK); err != nil {
		t.Fatal(err)
	}
	// Bob forges a private memory "for" Alice: p-tagged to her, signed by him
	forged := &nostr.Event{Kind: 30078, Tags: nostr.Tags{{"d", "snow:memory:user/alice/notes/x"}, {"p", alice}, {"encrypted", "nip44"}}, Content: "cipher"}
	if err := forged.Sign(bobSK); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		add      func(x *Export) bool
		want     bool
		category string
	}{
		{"own npub record", func(x *Export) bool { return x.AddNpub(npubRec) }, true, CategoryProfile},
		{"someone else's npub record", func(x *Export) bool { return x.AddNpub(memory.Npub{Pubkey: bob, Notes: []string{"x"}}) }, false, ""},
		{"own private item", func(x *Export) bool {
			return x.AddItem(memory.Item{ID: "1", Topic: "user/a/preferences/1", Text: "tea", Tier: snowclaw.TierPrivate, Subject: aliceNpub}, "")
		}, true, CategoryPreference},
		{"someone else's private item", func(x *Export) bool {
			return x.AddItem(memory.Item{ID: "2", Text: "x", Tier: snowclaw.TierPrivate, Subject: bob, Author: alice}, "")
		}, false, ""},
		{"internal item not about them", func(x *Export) bool {
			return x.AddItem(memory.Item{ID: "3", Text: "x", Tier: snowclaw.TierInternal}, "")
		}, false, ""},
		{"group item", func(x *Export) bool {
			return x.AddItem(memory.Item{ID: "4", Topic: "group/g/decisions/4", Text: "x", Tier: snowclaw.TierGroup, Group: "g"}, "")
		}, true, CategoryLearnedContext},
		{"encrypted event for someone else", func(x *Export) bool { return x.AddEvent(toBob, "Bob's secret") }, false, ""},
		{"encrypted event they wrote", func(x *Export) bool { return x.AddEvent(aliceWrote, "") }, true, CategoryLearnedContext},
		{"private memory forged for them by someone else", func(x *Export) bool { return x.AddEvent(forged, "planted") }, false, ""},
		{"npub record event", func(x *Export) bool { return x.AddEvent(npubEvt, "{}") }, true, CategoryProfile},
		{"kind 0", func(x *Export) bool {
			return x.AddEvent(&nostr.Event{ID: fakeID("k0"), PubKey: alice, Kind: 0, Content: `{"name":"alice"}`}, "")
		}, true, CategoryProfile},
		{"chat", func(x *Export) bool {
			return x.AddEvent(&nostr.Event{ID: fakeID("c"), PubKey: agent, Kind: 9, Content: "hello"}, "")
		}, true, CategoryConversation},
		{"plain add to default category", func(x *Export) bool { return x.Add("", ExportRecord{Content: "x"}) }, true, CategoryLearnedContext},
		{"work pattern", func(x *Export) bool { return x.Add(CategoryWorkPattern, ExportRecord{Content: "reviews on Monday"}) }, true, CategoryWorkPattern},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := NewExport(aliceNpub, exportNow)
			x.Agent = agent
			if got := tc.add(x); got != tc.want {
				t.Fatalf("added = %v, want %v", got, tc.want)
			}
			if !tc.want {
				if x.RecordCount != 0 {
					t.Errorf("refused data still exported: %+v", x.Categories)
				}
				return
			}
			if x.Categories[tc.category].Count == 0 {
				t.Errorf("nothing in %q: %+v", tc.category, x.Categories)
			}
		})
	}

	// The npub record appears once, as profile and preference records,
	// even when its stored event is added too.
	x := NewExport(aliceNpub, exportNow)
	x.AddNpub(npubRec)
	if x.AddEvent(npubEvt, "{}") {
		t.Error("npub record event added after AddNpub")
	}
	if p, pr := x.Categories[CategoryProfile].Count, x.Categories[CategoryPreference].Count; p != 4 || pr != 1 {
		t.Errorf("profile %d, preference %d records; want 4 (name, seen, note, owner note) and 1", p, pr)
	}
}

func TestExport_SortedAndMarkdown(t *testing.T) {
	_, alice, aliceNpub := newKey(t)
	x := NewExport(aliceNpub, exportNow)
	ts := []int64{300, 100, 200}
	for i, at := range ts {
		x.AddMessage(memory.HistoryMessage{Pubkey: alice, EventID: fakeID(string(rune('a' + i))), Content: "message at " + time.Unix(at, 0).UTC().Format("15:04:05"), Kind: 9, Timestamp: exportNow.Unix() - at})
	}
	x.AddItem(memory.Item{ID: "5", Topic: "project/x/notes/5", Text: "line one\nline two", Detail: "more", Tier: snowclaw.TierPublic, CreatedAt: exportNow.Unix()}, "")
	recs := x.Categories[CategoryConversation].Records
	if !slices.IsSortedFunc(recs, func(a, b ExportRecord) int { return a.CreatedAt.Compare(b.CreatedAt) }) {
		t.Errorf("conversation not sorted by CreatedAt: %+v", recs)
	}

	md := x.Markdown()
	wants := []string{"# What this agent keeps about " + aliceNpub, "## Conversation (3)", "## Learned context (1)", "## Work patterns (0)", "topic `project/x/notes/5`", "line one\n  line two", "4 records"}
	for _, c := range x.Categories {
		for _, r := range c.Records {
			wants = append(wants, "`"+r.MemoryID+"`", r.CreatedAt.Format("2006-01-02 15:04"))
			if !strings.Contains(r.Content, "\n") {
				wants = append(wants, r.Content)
			}
		}
	}
	for _, w := range wants {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	if !strings.Contains(md, "message at") || strings.Count(md, "\n- **") != 4 {
		t.Errorf("want 4 bullets:\n%s", md)
	}
}
