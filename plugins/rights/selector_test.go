package rights

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

func TestParseSelector(t *testing.T) {
	a, b := fakeID("a"), fakeID("b")
	tests := []struct {
		name    string
		in      string
		want    Selector
		kind    string
		wantErr string
	}{
		{"one id", "id " + a, Selector{IDs: []string{a}}, SelectIDs, ""},
		{"ids with commas and spaces", "ids " + a + ", " + strings.ToUpper(b), Selector{IDs: []string{a, b}}, SelectIDs, ""},
		{"bare ids", a + "," + b, Selector{IDs: []string{a, b}}, SelectIDs, ""},
		{"bad id", "id abc", Selector{}, "", "not an event id"},
		{"id without value", "id", Selector{}, "", "one or more event ids"},
		{"topic", "topic project/x", Selector{Topic: "project/x"}, SelectTopic, ""},
		{"topic with d prefix", "Topic snow:memory:user/npub1x/preferences", Selector{Topic: "snow:memory:user/npub1x/preferences"}, SelectTopic, ""},
		{"topic with spaces", "topic my project", Selector{}, "", "is not a topic"},
		{"topic empty", "topic ", Selector{}, "", "topic needs"},
		{"tags", "tag #work, travel", Selector{Tags: []string{"work", "travel"}}, SelectTags, ""},
		{"tag empty", "tags ,", Selector{}, "", "one or more tags"},
		{"before date", "before 2026-01-31", Selector{Before: time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)}, SelectBefore, ""},
		{"before rfc3339", "before 2026-01-31T10:00:00+01:00", Selector{Before: time.Date(2026, 1, 31, 9, 0, 0, 0, time.UTC)}, SelectBefore, ""},
		{"before not a date", "before yesterday", Selector{}, "", "date like 2026-01-31"},
		{"query", "what I said about my divorce", Selector{Query: "what I said about my divorce"}, SelectQuery, ""},
		{"quoted query", `"my divorce"`, Selector{Query: "my divorce"}, SelectQuery, ""},
		{"keyword inside query", "everything before lunch", Selector{Query: "everything before lunch"}, SelectQuery, ""},
		{"empty", "   ", Selector{}, "", "forget what"},
		{"punctuation only", "?!", Selector{}, "", "no words"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSelector(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseSelector(%q) err = %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseSelector(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if got.Kind() != tc.kind {
				t.Errorf("Kind = %q, want %q", got.Kind(), tc.kind)
			}
		})
	}
}

func TestSelector_Validate(t *testing.T) {
	tests := []struct {
		name    string
		s       Selector
		kind    string
		wantErr string
	}{
		{"empty", Selector{}, "", "nothing selected"},
		{"two kinds", Selector{Topic: "x", Query: "y"}, "mixed", "only one"},
		{"blank query", Selector{Query: "  "}, "", "nothing selected"},
		{"ids ok", Selector{IDs: []string{fakeID("a")}}, SelectIDs, ""},
		{"short id", Selector{IDs: []string{"abcd"}}, SelectIDs, "not an event id"},
		{"topic slash only", Selector{Topic: "/"}, SelectTopic, "is not a topic"},
		{"blank tag", Selector{Tags: []string{"ok", " "}}, SelectTags, "empty tag"},
		{"before", Selector{Before: time.Now()}, SelectBefore, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if k := tc.s.Kind(); k != tc.kind {
				t.Errorf("Kind = %q, want %q", k, tc.kind)
			}
			err := tc.s.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSelector_Match(t *testing.T) {
	day := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	item := &nostr.Event{
		ID: fakeID("item"), Kind: 30078, CreatedAt: nostr.Timestamp(day.Unix() - 1),
		Tags:    nostr.Tags{{"d", "snow:memory:project/alpha/notes/1"}, {"t", "Project"}, {"t", "work"}},
		Content: `{"summary":"The launch moved to March"}`,
	}
	secret := &nostr.Event{
		ID: fakeID("secret"), Kind: 30078, CreatedAt: nostr.Timestamp(day.Unix()),
		Tags:    nostr.Tags{{"d", "snow:memory:user/x/preferences"}, {"p", fakeID("p")}, {"encrypted", "nip44"}},
		Content: "AgFtZWFuaW5nbGVzcyBjaXBoZXJ0ZXh0",
	}
	chat := &nostr.Event{ID: fakeID("chat"), Kind: 9, CreatedAt: nostr.Timestamp(day.Unix() + 10), Tags: nostr.Tags{{"h", "g1"}, {"d", "snow:memory:project/alpha"}}, Content: "launch party!"}

	tests := []struct {
		name string
		s    Selector
		evt  *nostr.Event
		text string
		want bool
	}{
		{"id", Selector{IDs: []string{fakeID("x"), fakeID("item")}}, item, "", true},
		{"id other", Selector{IDs: []string{fakeID("x")}}, item, "", false},
		{"topic exact prefix", Selector{Topic: "project/alpha"}, item, "", true},
		{"topic with d prefix", Selector{Topic: "snow:memory:project/alpha/"}, item, "", true},
		{"topic partial segment", Selector{Topic: "project/al"}, item, "", false},
		{"topic on a chat event with d", Selector{Topic: "project/alpha"}, chat, "", false},
		{"tag case-insensitive", Selector{Tags: []string{"#project"}}, item, "", true},
		{"tag any", Selector{Tags: []string{"nope", "work"}}, item, "", true},
		{"tag none", Selector{Tags: []string{"nope"}}, item, "", false},
		{"before excludes the day", Selector{Before: day}, item, "", true},
		{"before is strict", Selector{Before: day}, secret, "", false},
		{"query words from text", Selector{Query: "LAUNCH march"}, item, "the launch moved to March", true},
		{"query falls back to plain content", Selector{Query: "launch march"}, item, "", true},
		{"query needs all words", Selector{Query: "launch april"}, item, "", false},
		{"query matches words not substrings", Selector{Query: "lunch"}, item, "", false},
		{"query on decrypted text", Selector{Query: "tea"}, secret, "Likes green tea", true},
		{"query never reads ciphertext", Selector{Query: "agftzwfuaw5nbgvzcybjaxbozxj0zxh0"}, secret, "", false},
		{"empty selector matches nothing", Selector{}, item, "", false},
		{"mixed selector matches nothing", Selector{IDs: []string{fakeID("item")}, Topic: "project"}, item, "", false},
		{"nil event", Selector{Query: "x"}, nil, "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Match(tc.evt, tc.text); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}
