package memory

import (
	"testing"

	"github.com/snowclaw/snowclaw"
)

// An item names whom it was learnt from in a snow:learnt-from tag (the
// conflict dashboard compares versions by it), except a public one: that
// would tell everyone who said it.
func TestCodec_LearntFromTag(t *testing.T) {
	p := newParties(t)
	for _, tc := range []struct {
		name string
		it   Item
		want string
	}{
		{"group, learnt from someone", Item{ID: "a1", Topic: "group/g/facts/a1", Text: "launch on May 3", Tier: snowclaw.TierGroup, Group: "g", Author: p.other}, p.other},
		{"private, learnt from its person", Item{ID: "a2", Topic: "user/x/notes/a2", Text: "likes tea", Tier: snowclaw.TierPrivate, Subject: p.person, Author: p.person}, p.person},
		{"npub author is written as hex", Item{ID: "a3", Topic: "group/g/facts/a3", Text: "x", Tier: snowclaw.TierGroup, Group: "g", Author: snowclaw.NpubOf(p.other)}, p.other},
		{"public: not named", Item{ID: "a4", Topic: "fact/general/a4", Text: "x", Tier: snowclaw.TierPublic, Author: p.other}, ""},
		{"nobody", Item{ID: "a5", Topic: "agent/notes/a5", Text: "x", Tier: snowclaw.TierInternal}, ""},
		{"not a key", Item{ID: "a6", Topic: "group/g/facts/a6", Text: "x", Tier: snowclaw.TierGroup, Group: "g", Author: "alice"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evt := p.signed(t, Record{Item: &tc.it})
			if got := snowclaw.LearntFrom(evt); got != tc.want {
				t.Fatalf("learnt from %q, want %q (tags %v)", got, tc.want, evt.Tags)
			}
			if n := len(snowclaw.TagValues(evt, snowclaw.TagLearntFrom)); n > 1 {
				t.Fatalf("%d snow:learnt-from tags", n)
			}
		})
	}
}
