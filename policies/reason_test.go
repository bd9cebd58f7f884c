package policies

import (
	"context"
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// outcome is a rule's answer as a client reads it: refused or not, and
// the words. A refusal must be typed (snowclaw.Error): its reason, not
// its text, decides the HTTP status and the metrics label.
func outcome(err error) (bool, string) {
	if err == nil {
		return false, ""
	}
	var typed snowclaw.Reasoner
	if !errors.As(err, &typed) {
		panic("untyped refusal: " + err.Error())
	}
	return true, err.Error()
}

// TestRefusalReasons: each rule refuses with the reason its words name.
func TestRefusalReasons(t *testing.T) {
	ids, groups := groupsWorld()
	w := &WriteRules{IDs: ids, Groups: groups}
	v := &Visibility{IDs: ids, Groups: groups}
	l := DefaultLimits()
	ctx := context.Background()
	burst := EventRateLimit(Rate{PerSecond: 1, Burst: 1}, Rate{}, func(string) bool { return false })
	ipCtx := WithConn(ctx, &Conn{IP: "192.0.2.1"})
	burst(ipCtx, snowclaw.ReadEvent(&nostr.Event{PubKey: "alice"}))
	filters := FilterRateLimit(Rate{PerSecond: 1, Burst: 1})
	filters(ipCtx, snowclaw.Filter{})
	for _, c := range []struct {
		name string
		err  error
		want snowclaw.Reason
	}{
		{"two h tags", w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: "alice", Kind: 9, Tags: nostr.Tags{{"h", "A"}, {"h", "B"}}})), snowclaw.ReasonInvalid},
		{"metadata by a user", w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: "alice", Kind: 39000})), snowclaw.ReasonRestricted},
		{"not a member", w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: "stranger", Kind: 9, Tags: nostr.Tags{{"h", "B"}}})), snowclaw.ReasonRestricted},
		{"unseen group, anonymous", UnseenGroup("hid", ""), snowclaw.ReasonAuthRequired},
		{"unseen group", UnseenGroup("hid", "stranger"), snowclaw.ReasonRestricted},
		{"config without owner", (&WriteRules{}).Check(snowclaw.ReadEvent(&nostr.Event{PubKey: "alice", Kind: 30078, Tags: nostr.Tags{{"d", "snowclaw:config:global"}}})), snowclaw.ReasonRestricted},
		{"content too long", l.RejectEvent(ctx, snowclaw.ReadEvent(&nostr.Event{Content: string(make([]byte, l.MaxContentBytes+1))})), snowclaw.ReasonInvalid},
		{"expired", l.RejectEvent(ctx, snowclaw.ReadEvent(&nostr.Event{CreatedAt: nostr.Now(), Tags: nostr.Tags{{"expiration", "1"}}})), snowclaw.ReasonInvalid},
		{"negative limit", l.RejectFilter(ctx, snowclaw.Filter{Filter: nostr.Filter{Limit: -1}}), snowclaw.ReasonInvalid},
		{"gift wraps anonymously", checkFilter(v, "", nostr.Filter{Kinds: []int{1059}}), snowclaw.ReasonAuthRequired},
		{"someone else's gift wraps", checkFilter(v, "alice", nostr.Filter{Kinds: []int{1059}, Tags: nostr.TagMap{"p": {"bob"}}}), snowclaw.ReasonRestricted},
		{"event rate", burst(ipCtx, snowclaw.ReadEvent(&nostr.Event{PubKey: "alice"})), snowclaw.ReasonRateLimited},
		{"filter rate", filters(ipCtx, snowclaw.Filter{}), snowclaw.ReasonRateLimited},
	} {
		refused, msg := outcome(c.err)
		if !refused {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if got := snowclaw.ReasonOf(c.err); got != c.want {
			t.Errorf("%s: reason %v (%q), want %v", c.name, got, msg, c.want)
		}
	}
	if err := w.Check(snowclaw.ReadEvent(&nostr.Event{PubKey: "alice", Kind: 1})); err != nil {
		t.Errorf("a plain note is refused: %v", err)
	}
}
