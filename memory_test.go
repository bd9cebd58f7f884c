package snowclaw_test

import (
	"errors"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// TestDecodeMemory maps each content to what every view reads of it.
func TestDecodeMemory(t *testing.T) {
	type mc = snowclaw.MemoryContent
	want := map[string]mc{
		`{"summary":"s","detail":"d","context":"c"}`: {Summary: "s", Detail: "d", Context: "c"},
		"  use badger \n": {Summary: "use badger"}, // plain text is the summary
		`{"detail":"d"}`:  {Summary: "d"},          // a detail alone is the summary
		`{"summary":"","detail":"d","context":"c"}`: {Summary: "d", Context: "c"},  // so is one beside an empty summary
		` {"summary":"","context":"c"}`:             {Context: "c"},                // a context alone stays a context
		`{"notes":["x"]}`:                           {},                            // an app's record has no text
		`{"summary": oops`:                          {Summary: `{"summary": oops`}, // not JSON after all
		`{"summary":3}`:                             {Summary: `{"summary":3}`},    // nor this
		"  ":                                        {},                            // empty
		`{"summary":"s","snowclaw":{"id":"x"}}`:     {Summary: "s"},                // bookkeeping stays out of the text
	}
	for content, w := range want {
		m := snowclaw.DecodeMemory(content)
		if m.Summary != w.Summary || m.Detail != w.Detail || m.Context != w.Context || m.IsEmpty() != w.IsEmpty() {
			t.Errorf("DecodeMemory(%q) = %+v, want %+v", content, m, w)
			continue
		}
		if w.IsEmpty() {
			continue
		}
		s, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if back := snowclaw.DecodeMemory(s); back.Summary != m.Summary || back.Detail != m.Detail || back.Context != m.Context {
			t.Errorf("DecodeMemory(Encode()) = %+v, want %+v", back, m)
		}
	}
}

type party struct{ sk, pk string }

func newParty() party {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	return party{sk, pk}
}

func TestOpen(t *testing.T) {
	agent, alice, bob := newParty(), newParty(), newParty()
	seal := func(from party, to string, plain string) string {
		s, err := snowclaw.Seal(plain, from.sk, to)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ev := func(author party, content string, tags ...nostr.Tag) *nostr.Event {
		return &nostr.Event{Kind: snowclaw.KindAppData, PubKey: author.pk, Content: content,
			Tags: append(nostr.Tags{{"d", "snow:memory:t"}}, tags...)}
	}
	enc := nostr.Tag{"encrypted", "nip44"}
	toAlice := nostr.Tag{"p", alice.pk}
	byAgent := ev(agent, seal(agent, alice.pk, "agent to alice"), toAlice, enc)
	byAlice := ev(alice, seal(alice, agent.pk, "alice to agent"), toAlice, enc)
	legacy := ev(agent, seal(agent, agent.pk, "agent to itself about alice"), toAlice, enc)
	internal := ev(agent, seal(agent, agent.pk, "agent to itself"), enc)
	forged := ev(bob, seal(bob, agent.pk, "bob claims alice's"), toAlice, enc)
	npubNoP := &nostr.Event{Kind: snowclaw.KindAppData, PubKey: agent.pk, Content: seal(agent, alice.pk, "record of alice"),
		Tags: nostr.Tags{{"d", snowclaw.PrefixMemoryNpub + alice.pk}, enc}}
	for _, tc := range []struct {
		name   string
		evt    *nostr.Event
		holder party
		person string
		want   string
		err    error
	}{
		{"clear content as it is", ev(alice, "hello"), bob, "", "hello", nil},
		{"the agent opens its private memory", byAgent, agent, "", "agent to alice", nil},
		{"its person opens it", byAgent, alice, "", "agent to alice", nil},
		{"the agent opens a person's own", byAlice, agent, "", "alice to agent", nil},
		{"the person opens what she wrote", byAlice, alice, "", "alice to agent", nil},
		{"the agent opens the older self-encrypted form", legacy, agent, "", "agent to itself about alice", nil},
		{"the agent opens internal", internal, agent, "", "agent to itself", nil},
		{"a person cannot open internal", internal, alice, "", "", snowclaw.ErrDecrypt},
		{"a stranger cannot open a private one", byAgent, bob, "", "", snowclaw.ErrDecrypt},
		{"a forged private memory is never opened", forged, agent, "", "", snowclaw.ErrForged},
		{"not even by its author", forged, bob, "", "", snowclaw.ErrForged},
		{"a record without p names its person", npubNoP, agent, alice.pk, "record of alice", nil},
		{"garbage", ev(agent, "AAAA", enc), agent, "", "", snowclaw.ErrDecrypt},
		{"no key", internal, party{}, "", "", snowclaw.ErrDecrypt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := snowclaw.Open(snowclaw.ReadEvent(tc.evt), tc.holder.sk, agent.pk, tc.person)
			if got != tc.want || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("Open = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
