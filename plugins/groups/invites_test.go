package groups_test

import (
	"context"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// TestInviteRevocation: removing a member who joined with a code revokes
// the code, whatever the dates of the join and the removal; leaving does
// not; a restart rebuilds the same answer.
func TestInviteRevocation(t *testing.T) {
	ctx := context.Background()
	now := nostr.Now()
	for _, tc := range []struct {
		name        string
		joinAt      nostr.Timestamp
		removeAt    nostr.Timestamp
		leave       bool // the joiner leaves instead of being removed
		wantRevoked bool
	}{
		{"removed after joining", now, now, false, true},
		{"join dated after the removal", now + 300, now, false, true},
		{"join dated before the group", now - 1800, now, false, true},
		{"left of their own accord", now, now, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each row has a store of its own
			w := newWorld(t)
			w.setup(t)
			steps := []*nostr.Event{signed(t, fz.stranger, snowclaw.KindJoinRequest, tc.joinAt, nostr.Tags{{"h", "club"}, {"code", "abc"}}, "")}
			if tc.leave {
				steps = append(steps, signed(t, fz.stranger, snowclaw.KindLeaveRequest, tc.removeAt, nostr.Tags{{"h", "club"}}, ""))
			} else {
				steps = append(steps, signed(t, fz.mod, snowclaw.KindRemoveUser, tc.removeAt, nostr.Tags{{"h", "club"}, {"p", pub(fz.stranger)}}, ""))
			}
			for _, evt := range steps {
				if reject, msg := w.submit(ctx, evt); reject {
					t.Fatalf("kind %d refused: %s", evt.Kind, msg)
				}
			}
			g, _ := w.groups.Snapshot("club")
			if g.InviteValid("abc") == tc.wantRevoked {
				t.Fatalf("code abc valid = %v, want %v", g.InviteValid("abc"), !tc.wantRevoked)
			}
			reject, msg := w.submit(ctx, signed(t, fz.owner, snowclaw.KindJoinRequest, now, nostr.Tags{{"h", "club"}, {"code", "abc"}}, ""))
			if reject != (tc.wantRevoked) {
				t.Fatalf("a join with the code: refused %v (%s), want %v", reject, msg, tc.wantRevoked)
			}
			w.checkRestart(t, false)
		})
	}
}
