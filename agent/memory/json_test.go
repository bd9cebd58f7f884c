package memory

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNpub_JSONShape(t *testing.T) {
	tests := []struct {
		name string
		n    Npub
		want []string // substrings of the JSON
	}{
		{"empty lists are not null", Npub{FirstSeen: 5},
			[]string{`"display_names":[]`, `"notes":[]`, `"preferences":{}`, `"first_seen":5`}},
		{"tuples", Npub{DisplayNames: []DisplayName{{"k0", 1739800000}}},
			[]string{`"display_names":[["k0",1739800000]]`}},
		{"owner notes omitted when empty", Npub{}, []string{`"is_owner":false`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.n)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %s", b, w)
				}
			}
			if strings.Contains(string(b), "owner_notes") || strings.Contains(string(b), "Pubkey") {
				t.Errorf("%s has fields it should omit", b)
			}
		})
	}
}

func TestNpub_ParseDocumentedExample(t *testing.T) {
	example := `{"display_names":[["k0",1739800000]],"first_seen":1739800000,"notes":["Project lead","Prefers concise responses"],"preferences":{"language":"en"},"is_owner":true}`
	var n Npub
	if err := json.Unmarshal([]byte(example), &n); err != nil {
		t.Fatal(err)
	}
	if n.Name() != "k0" || n.DisplayNames[0].At != 1739800000 || len(n.Notes) != 2 || n.Preferences["language"] != "en" || !n.IsOwner {
		t.Errorf("parsed %+v", n)
	}
}

func TestGroup_ParseDocumentedExample(t *testing.T) {
	example := `{"purpose":"Core team coordination","members":[["npub1abc","k0"],["npub1def","Clarity"]],"themes":["nostr","agents"],"decisions":[["Use NIP-78 for memory",1739800000],"undated"]}`
	var g Group
	if err := json.Unmarshal([]byte(example), &g); err != nil {
		t.Fatal(err)
	}
	if g.Purpose != "Core team coordination" || g.Members[1] != (Member{"npub1def", "Clarity"}) ||
		g.Decisions[0] != (Decision{"Use NIP-78 for memory", 1739800000}) || g.Decisions[1].Text != "undated" {
		t.Errorf("parsed %+v", g)
	}
	b, _ := json.Marshal(g)
	if !strings.Contains(string(b), `"members":[["npub1abc","k0"],["npub1def","Clarity"]]`) ||
		!strings.Contains(string(b), `["Use NIP-78 for memory",1739800000]`) {
		t.Errorf("marshalled %s", b)
	}
}

func TestTuple_RejectsGarbage(t *testing.T) {
	for _, in := range []string{`{}`, `[]`, `[1,2]`} {
		var d DisplayName
		var m Member
		var dec Decision
		if json.Unmarshal([]byte(in), &d) == nil || json.Unmarshal([]byte(in), &m) == nil || json.Unmarshal([]byte(in), &dec) == nil {
			t.Errorf("%s was accepted by a tuple", in)
		}
	}
}

func TestNpub_Name(t *testing.T) {
	_, pk := keypair(t)
	tests := []struct {
		name  string
		names []DisplayName
		want  string
	}{
		{"latest by time", []DisplayName{{"old", 1}, {"new", 5}, {"mid", 3}}, "new"},
		{"tie goes to later entry", []DisplayName{{"a", 2}, {"b", 2}}, "b"},
		{"none gives short npub", nil, "npub1"},
	}
	for _, tc := range tests {
		n := Npub{Pubkey: pk, DisplayNames: tc.names}
		got := n.Name()
		if tc.names == nil {
			if !strings.HasPrefix(got, "npub1") || len(got) > 20 {
				t.Errorf("%s: Name() = %q", tc.name, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s: Name() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
