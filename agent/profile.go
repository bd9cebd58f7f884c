package agent

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// ProfileOptions are what the agent says of itself (docs/agent.md).
type ProfileOptions struct {
	About   string   // kind 0 "about"; default a line naming the relay software
	Version string   // snow:version, the software's version
	Relays  []string // the NIP-65 relay list (kind 10002): the relay's public URL
}

// kindRelayList is NIP-65's relay list metadata.
const kindRelayList = 10002

// profileContent is the agent's kind 0: a name ordinary clients show on
// its replies, and the agent fields the directory reads (docs/api.md).
func (a *Agent) profileContent() string {
	model := "none"
	caps := []string{"memory", "nostr", "groups"}
	if a.o.LLM != nil {
		model = a.o.LLM.Name()
		caps = append(caps, "chat")
	}
	if a.learning.Enabled() {
		caps = append(caps, "learning")
	}
	about := a.o.Profile.About
	if about == "" {
		about = "The resident agent of a Snowclaw relay: it remembers, searches and answers in its groups and in private."
	}
	p := map[string]any{
		"name": a.o.Name, "display_name": a.o.Name, "about": about, "bot": true,
		snowclaw.ProfileModel: model, snowclaw.ProfileVersion: a.o.Profile.Version, snowclaw.ProfileCapabilities: caps,
	}
	if a.o.Owner != "" {
		p[snowclaw.ProfileOperator] = snowclaw.NpubOf(a.o.Owner)
	}
	b, _ := json.Marshal(p) // a map of strings and string lists always encodes
	return string(b)
}

// publishProfile keeps the agent's kind 0 and relay list current: each is
// published at start when it differs from the stored one, so a restart
// with a new model or name updates what clients show and an unchanged one
// writes nothing.
func (a *Agent) publishProfile(ctx context.Context) {
	a.keepCurrent(ctx, snowclaw.KindProfile, a.profileContent(), nil)
	if len(a.o.Profile.Relays) > 0 {
		var tags nostr.Tags
		for _, r := range a.o.Profile.Relays {
			tags = append(tags, nostr.Tag{"r", r})
		}
		a.keepCurrent(ctx, kindRelayList, "", tags)
	}
}

func (a *Agent) keepCurrent(ctx context.Context, kind int, content string, tags nostr.Tags) {
	var old *nostr.Event
	_ = a.o.Query(ctx, nostr.Filter{Kinds: []int{kind}, Authors: []string{a.pk}}, func(e *nostr.Event) bool {
		if old == nil || e.CreatedAt > old.CreatedAt {
			old = e
		}
		return true
	})
	if tags == nil {
		tags = nostr.Tags{}
	}
	if old != nil && old.Content == content && slices.EqualFunc(old.Tags, tags, func(x, y nostr.Tag) bool { return slices.Equal(x, y) }) {
		return
	}
	at := nostr.Timestamp(a.o.Now().Unix())
	if old != nil && at <= old.CreatedAt {
		at = old.CreatedAt + 1 // a replaceable event must be newer to replace
	}
	evt := nostr.Event{Kind: kind, CreatedAt: at, Content: content, Tags: tags}
	if err := evt.Sign(a.sk); err != nil {
		a.log.Error("agent profile not signed", "kind", kind, "err", err)
		return
	}
	if err := a.o.Publish(ctx, &evt); err != nil {
		a.log.Warn("agent profile not published", "kind", kind, "err", err)
	}
}
