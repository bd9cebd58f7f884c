package dynconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

func configEvent(d, content string, extra ...nostr.Tag) *nostr.Event {
	tags := nostr.Tags{{"d", d}}
	tags = append(tags, extra...)
	return &nostr.Event{Kind: 30078, PubKey: pkHex, CreatedAt: 1000, Tags: tags, Content: content}
}

func TestParsePatch(t *testing.T) {
	const group = "snowclaw:config:group:techteam"
	tests := []struct {
		name      string
		evt       *nostr.Event
		wantScope Scope
		want      Patch
		wantErr   string
	}{
		{"content both keys", configEvent(group, `{"respond_mode":"mention","context_history":30}`),
			Scope{Kind: Group, ID: "techteam"}, Patch{RespondMode: Mention, ContextHistory: 30}, ""},
		{"content one key", configEvent("snowclaw:config:global", `{"context_history": 30}`),
			Scope{Kind: Global}, Patch{ContextHistory: 30}, ""},
		{"content history as string", configEvent(group, `{"context_history":"45"}`),
			Scope{Kind: Group, ID: "techteam"}, Patch{ContextHistory: 45}, ""},
		{"content null is unset", configEvent(group, `{"respond_mode":null,"context_history":5}`),
			Scope{Kind: Group, ID: "techteam"}, Patch{ContextHistory: 5}, ""},
		{"unknown keys ignored", configEvent(group, `{"respond_mode":"all","temperature":0.2,"x":{"y":1}}`),
			Scope{Kind: Group, ID: "techteam"}, Patch{RespondMode: All}, ""},
		{"tags only", configEvent(group, "", nostr.Tag{"respond_mode", "owner"}, nostr.Tag{"context_history", "12"}, nostr.Tag{"h", "techteam"}),
			Scope{Kind: Group, ID: "techteam"}, Patch{RespondMode: Owner, ContextHistory: 12}, ""},
		{"tags override content", configEvent(group, `{"respond_mode":"all","context_history":30}`, nostr.Tag{"respond_mode", "none"}),
			Scope{Kind: Group, ID: "techteam"}, Patch{RespondMode: None, ContextHistory: 30}, ""},
		{"empty clears", configEvent(group, ""), Scope{Kind: Group, ID: "techteam"}, Patch{}, ""},
		{"empty object clears", configEvent(group, " {} "), Scope{Kind: Group, ID: "techteam"}, Patch{}, ""},
		{"npub scope", configEvent("snowclaw:config:npub:"+pkNpub, `{"respond_mode":"all"}`),
			Scope{Kind: Npub, ID: pkHex}, Patch{RespondMode: All}, ""},
		{"bad respond_mode", configEvent(group, `{"respond_mode":"sometimes"}`), Scope{}, Patch{}, `respond_mode "sometimes"`},
		{"respond_mode not a string", configEvent(group, `{"respond_mode":3}`), Scope{}, Patch{}, "respond_mode must be a string"},
		{"bad respond_mode tag", configEvent(group, "", nostr.Tag{"respond_mode", "loud"}), Scope{}, Patch{}, "tag respond_mode"},
		{"history zero", configEvent(group, `{"context_history":0}`), Scope{}, Patch{}, "out of range"},
		{"history too big", configEvent(group, `{"context_history":1001}`), Scope{}, Patch{}, "out of range"},
		{"history fraction", configEvent(group, `{"context_history":2.5}`), Scope{}, Patch{}, "not a whole number"},
		{"history bad tag", configEvent(group, "", nostr.Tag{"context_history", "many"}), Scope{}, Patch{}, "not a whole number"},
		{"bad json", configEvent(group, `{"respond_mode":`), Scope{}, Patch{}, "not a JSON object"},
		{"json array", configEvent(group, `["all"]`), Scope{}, Patch{}, "not a JSON object"},
		{"not config d tag", configEvent("snowclaw:memory:group:techteam", "{}"), Scope{}, Patch{}, "namespace"},
		{"wrong kind", &nostr.Event{Kind: 1, Tags: nostr.Tags{{"d", group}}}, Scope{}, Patch{}, "kind 1"},
		{"nil", nil, Scope{}, Patch{}, "no event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope, p, err := ParsePatch(tt.evt)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || scope != tt.wantScope || p != tt.want {
				t.Errorf("ParsePatch = %+v, %+v, %v; want %+v, %+v", scope, p, err, tt.wantScope, tt.want)
			}
		})
	}
}

func TestPatch_Event(t *testing.T) {
	tests := []struct {
		name    string
		patch   Patch
		scope   Scope
		tags    nostr.Tags
		content string
	}{
		{"global both", Patch{RespondMode: All, ContextHistory: 30}, Scope{Kind: Global},
			nostr.Tags{{"d", "snowclaw:config:global"}}, `{"respond_mode":"all","context_history":30}`},
		{"group one key gets h", Patch{RespondMode: Mention}, Scope{Kind: Group, ID: "techteam"},
			nostr.Tags{{"d", "snowclaw:config:group:techteam"}, {"h", "techteam"}}, `{"respond_mode":"mention"}`},
		{"npub uses bech32", Patch{ContextHistory: 5}, Scope{Kind: Npub, ID: pkHex},
			nostr.Tags{{"d", "snowclaw:config:npub:" + pkNpub}}, `{"context_history":5}`},
		{"empty patch", Patch{}, Scope{Kind: Global}, nostr.Tags{{"d", "snowclaw:config:global"}}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := tt.patch.Event(tt.scope, 1234)
			if evt.Kind != 30078 || evt.CreatedAt != 1234 || evt.Content != tt.content || evt.Sig != "" {
				t.Errorf("event = %+v", evt)
			}
			gotTags, _ := json.Marshal(evt.Tags)
			wantTags, _ := json.Marshal(tt.tags)
			if string(gotTags) != string(wantTags) {
				t.Errorf("tags = %s, want %s", gotTags, wantTags)
			}
			// What Event writes, ParsePatch reads back.
			scope, p, err := ParsePatch(&evt)
			if err != nil || scope != tt.scope || p != tt.patch {
				t.Errorf("round trip = %+v, %+v, %v", scope, p, err)
			}
		})
	}
}

func TestParseAssignments(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Patch
		wantErr string
	}{
		{"both", []string{"respond_mode=all", "context_history=30"}, Patch{RespondMode: All, ContextHistory: 30}, ""},
		{"one", []string{"respond_mode=mention"}, Patch{RespondMode: Mention}, ""},
		{"none", nil, Patch{}, ""},
		{"last wins", []string{"context_history=3", "context_history=4"}, Patch{ContextHistory: 4}, ""},
		{"spaces tolerated", []string{" respond_mode = owner "}, Patch{RespondMode: Owner}, ""},
		{"unknown key", []string{"temperature=1"}, Patch{}, "unknown config key"},
		{"no equals", []string{"respond_mode"}, Patch{}, "want key=value"},
		{"empty key", []string{"=all"}, Patch{}, "want key=value"},
		{"bad mode", []string{"respond_mode=loud"}, Patch{}, "not one of"},
		{"bad history", []string{"context_history=0"}, Patch{}, "out of range"},
		{"history not a number", []string{"context_history=lots"}, Patch{}, "not a whole number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAssignments(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseAssignments(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
			}
		})
	}
}

func TestPatch_Validate(t *testing.T) {
	tests := []struct {
		name  string
		patch Patch
		ok    bool
	}{
		{"zero", Patch{}, true},
		{"good", Patch{RespondMode: None, ContextHistory: 1000}, true},
		{"bad mode", Patch{RespondMode: "loud"}, false},
		{"negative history", Patch{ContextHistory: -1}, false},
		{"huge history", Patch{ContextHistory: 5000}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.patch.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
