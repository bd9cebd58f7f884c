package node_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// Scope audit (every reader of scope uses the same parser:
// docs/security.md#one-rule-per-question):
// paths that hand events, or text taken from them, to readers decide
// through policies.Visibility, never through a rule of their own.

// groupMemory is a member's own group-tier memory item (readable by the
// group's members only, whatever the group's privacy flag says).
func groupMemory(u user, group, topic, text string) nostr.Event {
	return mkEvent(u, 30078, nostr.Tags{
		{"d", "snow:memory:" + topic}, {"h", group}, {"snow:tier", "group"}, {"t", "vault"},
	}, `{"summary":"`+text+`"}`)
}

// The agent's reply in a public group is read by everyone, anonymous
// clients included; a group memory of that group by its members only.
// The agent's own audience rule ("a group reply may use that group's
// items") put the memory into the prompt of a reply anyone reads.
func TestAttack_ScopeGroupMemoryNotInPublicRoomReply(t *testing.T) {
	e := startAgentEnv(t)
	const room, secret, roomSecret = "pubroom", "vault-canary-3391", "vault-canary-7702"
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", room}, {"public"}, {"open"}}, ""))
	e.mustPublish(e.ac, mkEvent(e.alice, 9021, nostr.Tags{{"h", room}}, ""))

	// the same kind of memory in the private agent room and in the public room
	priv := e.mustPublish(e.ac, groupMemory(e.alice, agentGroup, "vault/agentroom", "the agentroom vault code is "+secret))
	pub := e.mustPublish(e.ac, groupMemory(e.alice, room, "vault/pubroom", "the pubroom vault code is "+roomSecret))

	// the public room's memory is not for strangers: not by id, not by #h
	stranger := newUser()
	sc := e.connect(&stranger)
	if evs, _ := fetch(t, sc, nostr.Filter{IDs: []string{pub.ID, priv.ID}}); len(evs) != 0 {
		t.Fatalf("a stranger reads the group memories directly: %v", ids(evs))
	}
	if evs, _ := fetch(t, e.connect(nil), nostr.Filter{IDs: []string{pub.ID}}); len(evs) != 0 {
		t.Fatalf("an anonymous client reads the public room's memory")
	}

	// where only members read the reply, the group's memory is used
	req := e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw what is the vault code?") })
	if all := strings.Join(contents(req), "\n"); !strings.Contains(all, secret) {
		t.Fatalf("the private room's prompt lacks its own group memory (recall did not find it):\n%s", all)
	}

	// in the public room, whose replies anyone reads, it is not
	req = e.ask(func() {
		e.mustPublish(e.ac, mkEvent(e.alice, 9, nostr.Tags{{"h", room}}, "@Snowclaw what is the vault code?"))
	})
	if all := strings.Join(contents(req), "\n"); strings.Contains(all, roomSecret) || strings.Contains(all, secret) {
		t.Errorf("the prompt of a reply anyone reads holds a members-only memory:\n%s", all)
	}
	// and that reply is what strangers read, over the socket
	anon := e.connect(nil)
	testwait.For(t, "the agent's reply in the public room, read anonymously", func() bool {
		evs, _ := fetch(t, anon, nostr.Filter{Kinds: []int{9}, Authors: []string{e.agent.pk}, Tags: nostr.TagMap{"h": {room}}})
		return len(evs) > 0
	})
}

// The same rule holds when the agent recalls from its own RAM (search
// off): a group memory stored through the HTTP API in a public room is
// for members only, so a reply in that room, which anyone reads, cannot
// carry it; in the private room the same kind of memory is used.
func TestAttack_ScopeGroupMemoryNotInPublicRoomReplyRAM(t *testing.T) {
	e := startAgentEnv(t, func(o *node.Options) { o.Search.Enabled = false })
	const room, secret, roomSecret = "pubroom", "vault-canary-4410", "vault-canary-8823"
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", room}, {"public"}, {"open"}}, ""))
	e.mustPublish(e.ac, mkEvent(e.alice, 9021, nostr.Tags{{"h", room}}, ""))
	for g, text := range map[string]string{agentGroup: "the agentroom vault code is " + secret, room: "the pubroom vault code is " + roomSecret} {
		if _, code, body := e.storeText(&e.alice, snowclaw.StoreRequest{Text: text, Tier: snowclaw.TierGroup, Group: g, Topic: "vault"}); code != 201 {
			t.Fatalf("storing the %s memory: %d %s", g, code, body)
		}
	}

	req := e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw what is the vault code?") })
	if all := strings.Join(contents(req), "\n"); !strings.Contains(all, secret) {
		t.Fatalf("the private room's prompt lacks its own group memory:\n%s", all)
	}
	req = e.ask(func() {
		e.mustPublish(e.ac, mkEvent(e.alice, 9, nostr.Tags{{"h", room}}, "@Snowclaw what is the vault code?"))
	})
	if all := strings.Join(contents(req), "\n"); strings.Contains(all, roomSecret) || strings.Contains(all, secret) {
		t.Errorf("the prompt of a reply anyone reads holds a members-only memory:\n%s", all)
	}
}

// privateMemory is u's own private memory, encrypted between u and the
// agent as the relay expects.
func privateMemory(t *testing.T, u user, agentPK, topic, text string) nostr.Event {
	t.Helper()
	key, err := nip44.GenerateConversationKey(agentPK, u.sk)
	if err != nil {
		t.Fatal(err)
	}
	content, err := nip44.Encrypt(`{"summary":"`+text+`"}`, key)
	if err != nil {
		t.Fatal(err)
	}
	return mkEvent(u, 30078, nostr.Tags{{"d", "snow:memory:" + topic}, {"p", u.pk}, {"encrypted", "nip44"}, {"snow:tier", "private"}}, content)
}

// The agent recalled as itself (it reads everything) and dropped what
// the reply's readers may not read afterwards: someone's private
// memories then crowded the few recalled results, so whether a public
// room's reply used a public memory told its readers whether others hold
// private memories on the subject. Recall ranks what the reply's readers
// may read.
func TestAttack_ScopeRecallNotCrowdedByUnreadable(t *testing.T) {
	e := startAgentEnv(t)
	const room, canary = "pubroom", "launch-canary-6120"
	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", room}, {"public"}, {"open"}}, ""))
	e.mustPublish(e.ac, mkEvent(e.alice, 9021, nostr.Tags{{"h", room}}, ""))
	e.mustPublish(oc, memory(e.owner, "plan/launch", `{"summary":"the launch plan codename is `+canary+`"}`))

	vic := newUser()
	vc := e.connect(&vic)
	for i := 0; i < 30; i++ {
		e.mustPublish(vc, privateMemory(t, vic, e.agent.pk, "plan/mine"+strconv.Itoa(i), "launch plan launch plan what is the launch plan "+strconv.Itoa(i)))
	}
	req := e.ask(func() {
		e.mustPublish(e.ac, mkEvent(e.alice, 9, nostr.Tags{{"h", room}}, "@Snowclaw what is the launch plan?"))
	})
	if all := strings.Join(contents(req), "\n"); !strings.Contains(all, canary) {
		t.Errorf("a stranger's private memories crowded the public memory out of a public room's prompt:\n%s", all)
	}
}

// A NIP-09 request naming someone else's event was refused with "not the
// author of event <id>", and one naming no stored event was accepted: an
// existence oracle for any id a stranger can compute. Ids of the relay's
// own group events are computable (its key is public, their tags and
// content fixed, created_at a guessable second), so a stranger could
// confirm that a hidden group exists and who joined it when. An event the
// requester may not read is now answered exactly like one that is not
// stored; what they may read (someone else's public post) is still
// refused, and nothing of anyone else's is deleted either way.
func TestAttack_ScopeDeletionNoExistenceOracle(t *testing.T) {
	e := startEnv(t)
	oc := e.connect(&e.owner)
	create := e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "hid"}, {"hidden"}, {"closed"}}, ""))
	secret := e.mustPublish(oc, mkEvent(e.owner, 9, nostr.Tags{{"h", "hid"}}, "hidden plans"))
	public := e.mustPublish(oc, mkEvent(e.owner, 1, nil, "a public note"))
	// the relay's own metadata of the group, whose id a stranger can compute
	evs, _ := fetch(t, oc, nostr.Filter{Kinds: []int{39000}, Authors: []string{e.relay.pk}, Tags: nostr.TagMap{"d": {"hid"}}})
	if len(evs) == 0 {
		t.Fatal("no metadata of the hidden group to aim at")
	}
	meta := evs[0]

	stranger := newUser()
	sc := e.connect(&stranger)
	missing := strings.Repeat("ab", 32)
	answer := func(target string) string {
		err := publish(sc, mkEvent(stranger, 5, nostr.Tags{{"e", target}}, ""))
		if err == nil {
			return "accepted"
		}
		return strings.ReplaceAll(err.Error(), target, "<id>")
	}
	want := answer(missing)
	for name, id := range map[string]string{"a hidden group's message": secret.ID, "a hidden group's creation": create.ID, "a hidden group's metadata": meta.ID} {
		if got := answer(id); got != want {
			t.Errorf("deleting %s: %q, but for an id nobody stored: %q", name, got, want)
		}
	}
	if got := answer(public.ID); !strings.Contains(got, "blocked: you are not the author") {
		t.Errorf("deleting someone else's readable event: %q, want blocked:", got)
	}
	// and nothing was deleted (metadata is replaced as the group changes,
	// so only the others are looked up by id)
	if evs, _ := fetch(t, oc, nostr.Filter{IDs: []string{secret.ID, create.ID, public.ID}}); len(evs) != 3 {
		t.Errorf("the owner reads %v of the 3 events after the stranger's requests (secret %s create %s public %s)", ids(evs), secret.ID[:8], create.ID[:8], public.ID[:8])
	}
}

// The same oracle through NIP-29: a moderator of any group (a role any
// admin may hand out) named another group's event in a delete-event and
// heard "event <id> is not in group <theirs>", where an id nobody stored
// passes. An event the moderator may not read is answered like a missing
// one; it is not deleted, and neither is a group's moderation history
// named that way.
func TestAttack_ScopeModeratorDeleteNoExistenceOracle(t *testing.T) {
	e := startEnv(t)
	oc := e.connect(&e.owner)
	mod := newUser()
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "pubg"}, {"public"}, {"open"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9000, nostr.Tags{{"h", "pubg"}, {"p", mod.pk, "moderator"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "hid"}, {"hidden"}, {"closed"}}, ""))
	secret := e.mustPublish(oc, mkEvent(e.owner, 9, nostr.Tags{{"h", "hid"}}, "hidden plans"))
	history := e.mustPublish(oc, mkEvent(e.owner, 9000, nostr.Tags{{"h", "hid"}, {"p", newUser().pk}}, ""))
	mine := e.mustPublish(oc, mkEvent(e.owner, 9, nostr.Tags{{"h", "pubg"}}, "a public room message"))

	mc := e.connect(&mod)
	answer := func(target string) string {
		err := publish(mc, mkEvent(mod, 9005, nostr.Tags{{"h", "pubg"}, {"e", target}}, ""))
		if err == nil {
			return "accepted"
		}
		return strings.ReplaceAll(err.Error(), target, "<id>")
	}
	want := answer(strings.Repeat("cd", 32))
	for name, id := range map[string]string{"a hidden group's message": secret.ID, "a hidden group's history": history.ID} {
		if got := answer(id); got != want {
			t.Errorf("naming %s: %q, but for an id nobody stored: %q", name, got, want)
		}
	}
	if evs, _ := fetch(t, oc, nostr.Filter{IDs: []string{secret.ID, history.ID}}); len(evs) != 2 {
		t.Errorf("the owner reads %d of the hidden group's 2 events after the moderator's requests", len(evs))
	}
	// in their own group the moderator still deletes
	if got := answer(mine.ID); got != "accepted" {
		t.Fatalf("the moderator deleting a message of their group: %q", got)
	}
	testwait.For(t, "the moderated message gone", func() bool {
		evs, _ := fetch(t, oc, nostr.Filter{IDs: []string{mine.ID}})
		return len(evs) == 0
	})
}

// The agent retires forgotten records with NIP-09 requests by address,
// and a deletion was served to anyone: its a tags carry the d tags of
// what it deletes, which are private (a private item's topic names its
// person, a group item's its group, hidden or not, and the hash of its
// text; a person record names the person). A deletion naming such an
// address is served only where the addresses may be read: its author,
// the owner and the relay's keys.
func TestAttack_ScopeDeletionAddressesNotPublic(t *testing.T) {
	e := startAgentEnv(t)
	e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw remember the vault code is vault-canary-2290") })
	e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw forget the vault code") })
	e.settle()

	f := nostr.Filter{Kinds: []int{5}, Authors: []string{e.agent.pk}}
	names := func(evs []*nostr.Event) bool {
		for _, ev := range evs {
			for _, a := range snowclaw.TagValues(ev, "a") {
				if strings.Contains(a, "snow:memory:group/"+agentGroup) {
					return true
				}
			}
		}
		return false
	}
	oc := e.connect(&e.owner)
	testwait.For(t, "the agent's deletion of the forgotten group item, read by the owner", func() bool { evs, _ := fetch(t, oc, f); return names(evs) })
	stranger := newUser()
	for who, c := range map[string]*user{"a stranger": &stranger, "an anonymous client": nil} {
		if evs, _ := fetch(t, e.connect(c), f); names(evs) {
			t.Errorf("%s reads a deletion naming a members-only group's item: %s", who, mustJSON(evs))
		}
	}
}

// agentRecords are the agent's stored kind 30078 events whose content
// holds any of texts, read with the agent's key (which reads everything).
func (e *agentEnv) agentRecords(texts ...string) []*nostr.Event {
	e.t.Helper()
	evs, closed := fetch(e.t, e.connect(&e.agent), nostr.Filter{Kinds: []int{30078}, Authors: []string{e.agent.pk}})
	if closed != "" {
		e.t.Fatalf("reading the agent's records: %s", closed)
	}
	var out []*nostr.Event
	for _, ev := range evs {
		for _, s := range texts {
			if strings.Contains(ev.Content, s) {
				out = append(out, ev)
				break
			}
		}
	}
	return out
}

// promptHolds fails the test for every text the model request holds.
func promptHolds(t *testing.T, req api.ChatRequest, texts ...string) {
	t.Helper()
	all := strings.Join(contents(req), "\n")
	for _, s := range texts {
		if strings.Contains(all, s) {
			t.Errorf("the prompt holds %q:\n%s", s, all)
		}
	}
}

// A delete-group removed the group's events from the store, but the
// agent kept its items, its group record (with what it had not flushed
// yet) and its chat buffer in RAM: a group created later under the same
// id got the old group's memories and conversation in its prompts, and
// the old record was written back to the relay.
func TestAttack_ScopeDeletedGroupForgotten(t *testing.T) {
	for _, search := range []bool{true, false} {
		t.Run(map[bool]string{true: "search", false: "ram"}[search], func(t *testing.T) {
			e := startAgentEnv(t, func(o *node.Options) {
				o.Search.Enabled = search
				// only explicit requests flush: the decision below waits in RAM
				o.Agent.FlushInterval, o.Agent.FlushEvery = time.Hour, 1000
			})
			const secret, decision, chat = "launch-canary-6620", "rendezvous-canary-1187", "chat-canary-9043"
			e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw remember the launch code is "+secret) })
			e.say(e.bc, e.bob, "decided: the rendezvous point is "+decision)
			e.say(e.bc, e.bob, "off the record, "+chat)
			// the old group's own prompt holds all three: the checks below can fail
			req := e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw what is the launch code and the rendezvous point?") })
			for _, s := range []string{secret, decision, chat, "moon base"} {
				if !strings.Contains(strings.Join(contents(req), "\n"), s) {
					t.Fatalf("the old group's prompt lacks %q:\n%s", s, strings.Join(contents(req), "\n"))
				}
			}
			e.settle()
			if len(e.agentRecords(secret)) == 0 {
				t.Fatal("the remembered item was not stored")
			}

			oc := e.connect(&e.owner)
			e.mustPublish(oc, mkEvent(e.owner, 9008, nostr.Tags{{"h", agentGroup}}, ""))
			e.settle()
			e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", agentGroup}}, ""))
			carol := newUser()
			cc := e.connect(&carol)
			e.mustPublish(cc, mkEvent(carol, 9021, nostr.Tags{{"h", agentGroup}}, ""))
			req = e.ask(func() {
				e.mustPublish(cc, mkEvent(carol, 9, nostr.Tags{{"h", agentGroup}}, "@Snowclaw what is the launch code and the rendezvous point?"))
			})
			promptHolds(t, req, secret, decision, chat, "moon base", e.alice.pk, e.bob.pk)
			for _, m := range e.n.Agent().History(agentGroup) {
				if m.Pubkey != carol.pk && !m.Self {
					t.Errorf("the new group's buffer holds the old group's message %+v", m)
				}
			}

			if err := e.n.Agent().Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if evs := e.agentRecords(secret, decision, "moon base"); len(evs) != 0 {
				t.Errorf("the agent wrote the deleted group's memory back: %s", mustJSON(evs))
			}
		})
	}
}

// A moderator's delete-event of the agent's group memory (and of the
// message that asked for it) removed them from the store, but the agent
// kept both in RAM: its next prompts in the group still carried them,
// and its next write of the record would undo the deletion.
func TestAttack_ScopeModeratorDeletedMemoryStaysDeleted(t *testing.T) {
	e := startAgentEnv(t, func(o *node.Options) { o.Search.Enabled = false })
	const secret = "vault-canary-5731"
	var asked nostr.Event
	e.ask(func() { asked = e.say(e.ac, e.alice, "@Snowclaw remember the vault code is "+secret) })
	e.settle()
	stored := e.agentRecords(secret)
	if len(stored) != 1 {
		t.Fatalf("agent records holding the memory: %d, want 1", len(stored))
	}

	oc := e.connect(&e.owner)
	e.mustPublish(oc, mkEvent(e.owner, 9005, nostr.Tags{{"h", agentGroup}, {"e", stored[0].ID}, {"e", asked.ID}}, ""))
	if evs := e.agentRecords(secret); len(evs) != 0 {
		t.Fatalf("the moderator's deletion left %s", mustJSON(evs))
	}
	if err := e.n.Agent().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if evs := e.agentRecords(secret); len(evs) != 0 {
		t.Errorf("the agent's flush wrote the deleted memory back: %s", mustJSON(evs))
	}
	req := e.ask(func() { e.say(e.bc, e.bob, "@Snowclaw what is the vault code?") })
	promptHolds(t, req, secret)
	// a restated memory is a new one, and is kept
	e.ask(func() { e.say(e.ac, e.alice, "@Snowclaw remember that the vault code is "+secret) })
	e.settle()
	if len(e.agentRecords(secret)) != 1 {
		t.Error("the memory restated after the deletion was not stored")
	}
}
