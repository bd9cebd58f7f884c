package snowclaw

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

// FuzzScope feeds arbitrary tag lists to ReadEvent, the one reading of
// the tags that decide an event's audience, and checks what it promises:
// a group is accepted only from exactly one non-empty h tag and a refused
// one is never a real group; the tier never reads a group, an encryption
// or a person as public; a private memory belongs to a person only when
// every p tag names them and they or the agent signed it; and the d tag
// is the one the stores address the event by.
func FuzzScope(f *testing.F) {
	const agent = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
	const alice = "c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5"
	for _, seed := range []string{
		`[["h","A"]]`, `[["h",""],["h","B"]]`, `[["h","A"],["h","B"]]`, `[["h"]]`, `[]`,
		`[["encrypted","nip44"],["p","` + alice + `"]]`,
		`[["encrypted","nip44"],["p","` + alice + `"],["p","` + agent + `"]]`,
		`[["encrypted"],["p","ALICE"],["h","g"]]`,
		`[["encrypted","nip44-group"],["h","g"],["encrypted","nip44"]]`,
		`[["d"],["d","snowclaw:config:global"],["d","snow:memory:x"]]`,
	} {
		f.Add(seed, alice)
		f.Add(seed, agent)
	}
	f.Fuzz(func(t *testing.T, tagsJSON, author string) {
		var tags nostr.Tags
		if json.Unmarshal([]byte(tagsJSON), &tags) != nil {
			return
		}
		evt := ReadEvent(&nostr.Event{Kind: KindAppData, PubKey: author, Tags: tags})
		var hs, encs []nostr.Tag
		for _, tag := range tags {
			switch {
			case len(tag) > 0 && tag[0] == "h":
				hs = append(hs, tag)
			case len(tag) > 0 && tag[0] == "encrypted":
				encs = append(encs, tag)
			}
		}
		switch {
		case len(hs) == 0:
			if evt.Group != "" || evt.GroupErr != nil {
				t.Fatalf("no h tag: %q, %v", evt.Group, evt.GroupErr)
			}
		case len(hs) == 1 && len(hs[0]) >= 2 && hs[0][1] != "":
			if evt.Group != hs[0][1] || evt.GroupErr != nil {
				t.Fatalf("one h tag %v: %q, %v", hs[0], evt.Group, evt.GroupErr)
			}
		default:
			if evt.GroupErr == nil || evt.Group != MalformedGroup {
				t.Fatalf("refused h tags %v read as group %q (%v)", hs, evt.Group, evt.GroupErr)
			}
		}
		if evt.Encrypted != (len(encs) > 0) {
			t.Fatalf("encrypted %v for encrypted tags %v", evt.Encrypted, encs)
		}
		if evt.GroupSealed && slices.ContainsFunc(encs, func(tag nostr.Tag) bool { return len(tag) < 2 || tag[1] != EncryptionGroup }) {
			t.Fatalf("group sealed with encrypted tags %v", encs)
		}
		if evt.Tier == TierPublic && (len(hs) > 0 || evt.Encrypted) {
			t.Fatalf("public with h tags %v, encrypted %v", hs, evt.Encrypted)
		}
		if evt.D != evt.Tags.GetD() {
			t.Fatalf("d %q, the stores address it by %q", evt.D, evt.Tags.GetD())
		}

		person, ok := evt.Person(agent)
		if !ok {
			return
		}
		ps := TagValues(evt.Event, "p")
		if evt.Tier != TierPrivate || len(ps) == 0 || slices.ContainsFunc(ps, func(p string) bool { return p != person }) {
			t.Fatalf("Person gave %s for p tags %v, tier %s", person, ps, evt.Tier)
		}
		if author != person && author != agent {
			t.Fatalf("Person gave %s for an event signed by %s", person, author)
		}
	})
}
