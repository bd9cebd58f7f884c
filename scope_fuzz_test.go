package snowclaw

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// FuzzScope feeds arbitrary tag lists to the two rules that decide an
// event's audience, ParseGroup and PersonOf, and checks what each promises:
// a group is accepted only from exactly one non-empty h tag, GroupOf never
// puts a refused event in a real group, and a private memory belongs to a
// person only when every p tag names them and they or the agent signed it.
func FuzzScope(f *testing.F) {
	const agent = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	const alice = "c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5"
	for _, seed := range []string{
		`[["h","A"]]`, `[["h",""],["h","B"]]`, `[["h","A"],["h","B"]]`, `[["h"]]`, `[]`,
		`[["encrypted","nip44"],["p","` + alice + `"]]`,
		`[["encrypted","nip44"],["p","` + alice + `"],["p","` + agent + `"]]`,
		`[["encrypted"],["p","ALICE"],["h","g"]]`,
	} {
		f.Add(seed, alice)
		f.Add(seed, agent)
	}
	f.Fuzz(func(t *testing.T, tagsJSON, author string) {
		var tags nostr.Tags
		if json.Unmarshal([]byte(tagsJSON), &tags) != nil {
			return
		}
		evt := &nostr.Event{Kind: KindAppData, PubKey: author, Tags: tags}
		var hs []nostr.Tag
		for _, tag := range tags {
			if len(tag) > 0 && tag[0] == "h" {
				hs = append(hs, tag)
			}
		}
		g, err := ParseGroup(evt)
		switch {
		case len(hs) == 0:
			if g != "" || err != nil {
				t.Fatalf("no h tag: %q, %v", g, err)
			}
		case len(hs) == 1 && len(hs[0]) >= 2 && hs[0][1] != "":
			if g != hs[0][1] || err != nil {
				t.Fatalf("one h tag %v: %q, %v", hs[0], g, err)
			}
		default:
			if err == nil {
				t.Fatalf("h tags %v accepted as %q", hs, g)
			}
			if GroupOf(evt) != MalformedGroup {
				t.Fatalf("refused h tags %v read as group %q", hs, GroupOf(evt))
			}
		}

		person, ok := PersonOf(evt, agent)
		if !ok {
			return
		}
		ps := TagValues(evt, "p")
		if !IsEncrypted(evt) || len(ps) == 0 || slices.ContainsFunc(ps, func(p string) bool { return p != person }) {
			t.Fatalf("PersonOf gave %s for p tags %v", person, ps)
		}
		if author != person && author != agent {
			t.Fatalf("PersonOf gave %s for an event signed by %s", person, author)
		}
	})
}
