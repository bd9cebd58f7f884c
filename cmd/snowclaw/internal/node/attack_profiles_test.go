package node_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Finding 11: kind 0 profiles from fresh keys created one agent person
// record each (12k profiles → ~10.5k agent events, RSS 56 → 401 MB). A
// profile is not an interaction: the agent records people it deals with
// and keeps the other names in a bounded RAM cache only.

// personRecords counts the agent's stored person records, read with the
// agent's key, after a flush (the barrier: whatever the agent would
// persist is on the relay).
func (e *agentEnv) personRecords() map[string]bool {
	e.t.Helper()
	if err := e.n.Agent().Flush(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	evs, _ := fetch(e.t, e.connect(&e.agent), nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}})
	out := map[string]bool{}
	for _, ev := range evs {
		if d := ev.Tags.GetD(); strings.HasPrefix(d, snowclaw.PrefixMemoryNpub) {
			out[d] = true
		}
	}
	return out
}

func TestAttack_ProfileSpamCreatesNoPeople(t *testing.T) {
	e := startAgentEnv(t)
	e.settle()
	before := e.personRecords()
	people := len(e.n.Agent().List().Npubs)

	const spam = 2000
	c := e.connect(nil) // profiles need no login
	var last user
	for i := range spam {
		last = newUser()
		p := nostr.Event{Kind: 0, CreatedAt: nostr.Now() - 60, Tags: nostr.Tags{}, Content: fmt.Sprintf(`{"name":"spam-%d"}`, i)}
		p.Sign(last.sk) // a minute old, so a newer profile can follow below
		e.mustPublish(c, p)
	}
	e.settle()
	after := e.personRecords()
	if len(after) != len(before) {
		t.Errorf("%d profiles from fresh keys: stored person records %d → %d", spam, len(before), len(after))
	}
	if n := len(e.n.Agent().List().Npubs); n != people {
		t.Errorf("%d profiles from fresh keys: the agent knows %d people, was %d", spam, n, people)
	}

	// the last of them joins and writes: now a person, with their name
	lc := e.connect(&last)
	e.mustPublish(lc, mkEvent(last, 9021, nostr.Tags{{"h", agentGroup}}, ""))
	e.mustPublish(lc, mkEvent(last, 9, nostr.Tags{{"h", agentGroup}}, "hello everyone"))
	e.settle()
	snap, ok := e.n.Agent().Get(mustSubject(t, last.pk))
	if !ok || snap.Npub == nil || snap.Npub.Name() != fmt.Sprintf("spam-%d", spam-1) {
		t.Fatalf("the person who wrote: %+v", snap.Npub)
	}
	if got := e.personRecords(); !got[snowclaw.PrefixMemoryNpub+snowclaw.NpubOf(last.pk)] || len(got) != len(before)+1 {
		t.Errorf("person records after one of them wrote: %d (was %d)", len(got), len(before))
	}
	// a person the agent knows gets their new name at once
	e.mustPublish(lc, mkEvent(last, 0, nil, `{"name":"no longer spam"}`))
	e.settle()
	if snap, _ := e.n.Agent().Get(mustSubject(t, last.pk)); snap.Npub == nil || snap.Npub.Name() != "no longer spam" {
		t.Errorf("a known person's new profile name: %+v", snap.Npub)
	}
}
