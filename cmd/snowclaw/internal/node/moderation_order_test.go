package node_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/relay"
)

// These tests do not run in parallel: each runs two instances and a
// burst or a flood against them, and on a small machine side by side they
// would measure the machine, not the relay (a publish waits 5 s for OK).

// Moderation over two instances of one relay on a shared PostgreSQL
// database, attacked from outside: an acknowledged removal or metadata
// change holds on both instances whatever the other instance was doing,
// because the group's state is a function of its events in the store's
// order (plugins/groups).

// rounds is how many times each race is run: its window is a few
// milliseconds wide, and one run rarely lands in it. Under -short or the
// race detector (which slows it tenfold) a few rounds check the code
// paths; .ci/run runs all of them without the race detector.
func rounds(t *testing.T) int {
	if testing.Short() || raceEnabled {
		return 5
	}
	return 50
}

// burst sends events on c as fast as the relay answers, each from its
// own connection's goroutine, and waits for every OK.
func burst(t *testing.T, conns []*wsclient.Client, events []nostr.Event) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(events))
	for i, evt := range events {
		c := conns[i%len(conns)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := publish(c, evt); err != nil {
				errs <- fmt.Errorf("kind %d: %w", evt.Kind, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// notMember checks on every env that u can no longer post in g, nor,
// when g is private, read a message sent to it after the removal.
func notMember(t *testing.T, envs []*testEnv, u user, g string, private bool, why string) {
	t.Helper()
	owner := envs[0].owner
	after := envs[0].mustPublish(envs[0].connect(&owner), mkEvent(owner, 9, nostr.Tags{{"h", g}}, "after "+why))
	for i, e := range envs {
		c := e.connect(&u)
		if err := publish(c, mkEvent(u, 9, nostr.Tags{{"h", g}}, fmt.Sprintf("still here on %d", i))); err == nil {
			t.Fatalf("%s: the removed member still posts on instance %d", why, i)
		} else if !strings.Contains(err.Error(), "restricted:") {
			t.Fatalf("%s: the removed member's post on instance %d refused with %v, want restricted:", why, i, err)
		}
		evs, _ := fetch(t, c, nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {g}}})
		if contains(evs, after.ID) != !private {
			t.Fatalf("%s: the removed member reads on instance %d a message sent after the removal: %v (the group is private: %v)", why, i, !private, private)
		}
	}
}

// A burst of put-users on A and a removal on B: the removal holds on
// both, in closed and in open groups, and when only outsiders (joins)
// make the burst.
func TestModerationOrder_RemovalHoldsAfterBurstElsewhere(t *testing.T) {
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	owner := a.owner
	oa, ob := a.connect(&owner), b.connect(&owner)
	fill := []*wsclient.Client{oa, a.connect(&owner), a.connect(&owner)}
	for _, variant := range []string{"closed", "open", "outsiders"} {
		t.Run(variant, func(t *testing.T) {
			for round := range rounds(t) {
				g := fmt.Sprintf("%s-%d", variant, round)
				member := newUser()
				flags := nostr.Tags{{"h", g}, {"private"}, {"restricted"}, {"closed"}}
				if variant != "closed" {
					flags = nostr.Tags{{"h", g}, {"public"}, {"open"}}
				}
				a.mustPublish(oa, mkEvent(owner, 9007, flags, ""))
				a.mustPublish(oa, mkEvent(owner, 9000, nostr.Tags{{"h", g}, {"p", member.pk}}, ""))
				var crowd []nostr.Event
				var conns []*wsclient.Client
				for range 5 {
					if variant == "outsiders" {
						o := newUser()
						crowd = append(crowd, mkEvent(o, 9021, nostr.Tags{{"h", g}}, ""))
						conns = append(conns, a.connect(&o))
					} else {
						crowd = append(crowd, mkEvent(owner, 9000, nostr.Tags{{"h", g}, {"p", newUser().pk}}, ""))
					}
				}
				if conns == nil {
					conns = fill
				}
				burst(t, conns, crowd)
				b.mustPublish(ob, mkEvent(owner, 9001, nostr.Tags{{"h", g}, {"p", member.pk}}, ""))
				notMember(t, envs, member, g, variant == "closed", fmt.Sprintf("round %d", round))
			}
		})
	}
	// and after both instances restart, the relay-signed member lists
	// agree: the owner and the 5 added, not the removed member
	a.restart()
	b.restart()
	for round := range rounds(t) {
		g := fmt.Sprintf("closed-%d", round)
		for i, e := range envs {
			testwait.For(t, fmt.Sprintf("instance %d's 39002 of %s listing 6 members after a restart", i, g), func() bool {
				meta := e.groupMeta(&owner, 39002, g)
				return meta != nil && countP(meta) == 6
			})
			if got, _ := e.n.Groups().Snapshot(g); len(got.Members) != 6 {
				t.Fatalf("instance %d after a restart: %s has %d members, want 6", i, g, len(got.Members))
			}
		}
	}
}

// A burst of joins on A and a switch to private and closed on B: the
// switch holds on both (anonymous readers and new joiners are refused).
func TestModerationOrder_PrivacySwitchHoldsAfterBurstElsewhere(t *testing.T) {
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	owner := a.owner
	oa, ob := a.connect(&owner), b.connect(&owner)
	for round := range rounds(t) {
		g := fmt.Sprintf("pub-%d", round)
		a.mustPublish(oa, mkEvent(owner, 9007, nostr.Tags{{"h", g}, {"public"}, {"open"}}, ""))
		var joins []nostr.Event
		var conns []*wsclient.Client
		for range 5 {
			o := newUser()
			joins = append(joins, mkEvent(o, 9021, nostr.Tags{{"h", g}}, ""))
			conns = append(conns, a.connect(&o))
		}
		burst(t, conns, joins)
		b.mustPublish(ob, mkEvent(owner, 9002, nostr.Tags{{"h", g}, {"private"}, {"closed"}}, ""))
		msg := a.mustPublish(oa, mkEvent(owner, 9, nostr.Tags{{"h", g}}, "members only now"))
		for i, e := range envs {
			evs, closed := fetch(t, e.connect(nil), nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {g}}})
			if contains(evs, msg.ID) || !strings.HasPrefix(closed, "auth-required:") {
				t.Fatalf("round %d: an anonymous reader on instance %d gets %d events, CLOSED %q, after the switch to private", round, i, len(evs), closed)
			}
			late := newUser()
			e.refusedWith(e.connect(&late), mkEvent(late, 9021, nostr.Tags{{"h", g}}, ""), "restricted:")
		}
	}
}

// A burst on A and a switch to encrypted on B, then every instance
// restarts: they start (none publishes before it is wired) and agree the
// group is encrypted.
func TestModerationOrder_EncryptedSwitchSurvivesRestart(t *testing.T) {
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	owner := a.owner
	oa, ob := a.connect(&owner), b.connect(&owner)
	const g = "vault"
	a.mustPublish(oa, mkEvent(owner, 9007, nostr.Tags{{"h", g}}, ""))
	var puts []nostr.Event
	for range 6 {
		puts = append(puts, mkEvent(owner, 9000, nostr.Tags{{"h", g}, {"p", newUser().pk}}, ""))
	}
	burst(t, []*wsclient.Client{oa, a.connect(&owner)}, puts)
	b.mustPublish(ob, mkEvent(owner, 9002, nostr.Tags{{"h", g}, {"encrypted"}}, ""))
	a.stop()
	b.stop()
	a.start()
	b.start()
	for i, e := range envs {
		if info, ok := e.n.Groups().GroupInfo(g); !ok || !info.Encrypted {
			t.Fatalf("instance %d after the restart: group %v encrypted %v", i, ok, info.Encrypted)
		}
		testwait.For(t, fmt.Sprintf("instance %d's 39000 saying encrypted", i), func() bool {
			meta := e.groupMeta(&owner, 39000, g)
			return meta != nil && hasFlag(meta, "encrypted")
		})
	}
}

// A group created on A and joined on B right after its OK: the join is
// accepted (B caught up with A before deciding) and holds (the member
// posts on A).
func TestModerationOrder_CreateThenJoinElsewhere(t *testing.T) {
	envs := startCluster(t, 2, withMetrics)
	a, b := envs[0], envs[1]
	owner := a.owner
	oa := a.connect(&owner)
	for round := range rounds(t) {
		g := fmt.Sprintf("fresh-%d", round)
		joiner := newUser()
		a.mustPublish(oa, mkEvent(owner, 9007, nostr.Tags{{"h", g}, {"public"}, {"open"}}, ""))
		b.mustPublish(b.connect(&joiner), mkEvent(joiner, 9021, nostr.Tags{{"h", g}}, ""))
		a.mustPublish(a.connect(&joiner), mkEvent(joiner, 9, nostr.Tags{{"h", g}}, "hello"))
	}
	// the lag is on every instance's /metrics
	for i, e := range envs {
		series := e.scrape()
		for _, name := range []string{"snowclaw_feed_lag_entries", "snowclaw_feed_lag_seconds", "snowclaw_feed_position", "snowclaw_feed_refusals_total"} {
			if _, ok := series[name]; !ok {
				t.Fatalf("instance %d's /metrics lacks %s", i, name)
			}
		}
		if series["snowclaw_feed_position"] <= 0 {
			t.Fatalf("instance %d's feed position is %v after the rounds", i, series["snowclaw_feed_position"])
		}
	}
}

// An instance started on the shared database with keys of its own is
// refused with a message naming the key file, and serves nothing.
func TestModerationOrder_OtherKeysRefused(t *testing.T) {
	envs := startCluster(t, 1)
	o := envs[0].opts
	other := t.TempDir()
	keys, err := relay.LoadKeys(other, true)
	if err != nil {
		t.Fatal(err)
	}
	o.DataDir, o.Keys = other, keys
	n, err := node.New(context.Background(), o)
	if err == nil {
		n.Close()
		t.Fatal("an instance with other keys started on the shared database")
	}
	if !strings.Contains(err.Error(), "relay.key") || !strings.Contains(err.Error(), "another key") {
		t.Fatalf("refusal %q does not name relay.key", err)
	}
}

// A flood of 5,000 joins into one group on A, and while it runs a
// removal on A: on B the removed member's post and read are refused or
// correct, never decided on stale membership; B's health reports its lag
// in the change log.
func TestModerationOrder_JoinFlood(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("5,000 joins over two instances: run without -short and the race detector (.ci/run does)")
	}
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	owner := a.owner
	oa := a.connect(&owner)
	const g = "crowd"
	member := newUser()
	a.mustPublish(oa, mkEvent(owner, 9007, nostr.Tags{{"h", g}, {"private"}, {"open"}}, ""))
	a.mustPublish(oa, mkEvent(owner, 9000, nostr.Tags{{"h", g}, {"p", member.pk}}, ""))
	mb := b.connect(&member)
	b.mustPublish(mb, mkEvent(member, 9, nostr.Tags{{"h", g}}, "before the flood"))

	const joins, conns = 5000, 16
	var flood sync.WaitGroup
	var joined sync.WaitGroup
	joined.Add(1000)
	errs := make(chan error, conns)
	for w := range conns {
		c := a.connect(nil)
		flood.Add(1)
		go func() {
			defer flood.Done()
			for i := w; i < joins; i += conns {
				u := newUser()
				if err := publish(c, mkEvent(u, 9021, nostr.Tags{{"h", g}}, "")); err != nil {
					errs <- err
					return
				}
				if i < 1000 {
					joined.Done()
				}
			}
		}()
	}
	joined.Wait() // a fifth of the flood is in: the removal lands in it
	a.mustPublish(oa, mkEvent(owner, 9001, nostr.Tags{{"h", g}, {"p", member.pk}}, ""))
	secret := a.mustPublish(oa, mkEvent(owner, 9, nostr.Tags{{"h", g}}, "after the removal"))
	err := publish(mb, mkEvent(member, 9, nostr.Tags{{"h", g}}, "am I still in?"))
	if err == nil || !(strings.Contains(err.Error(), "restricted:") || strings.Contains(err.Error(), "error:")) {
		t.Fatalf("on B during the flood, the member removed on A posts: %v", err)
	}
	evs, closed := fetch(t, mb, nostr.Filter{Kinds: []int{9}, Tags: nostr.TagMap{"h": {g}}})
	if contains(evs, secret.ID) {
		t.Fatalf("on B during the flood, the member removed on A reads what was sent after (CLOSED %q)", closed)
	}
	code, health := b.api(nil, "GET", "/api/v1/health", nil)
	if _, ok := health["feed"].(map[string]any); !ok || (code != 200 && code != 503) {
		t.Fatalf("B's health during the flood: %d %v, want the feed's lag", code, health)
	}
	flood.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a join of the flood: %v", err)
	}
	testwait.For(t, "B holding the 5,001 members", func() bool {
		got, ok := b.n.Groups().Snapshot(g)
		return ok && len(got.Members) == joins+1
	})
	if _, ok := b.n.Groups().Snapshot(g); ok && b.n.Groups().IsMember(g, member.pk) {
		t.Fatal("B still counts the removed member")
	}
}

// A removed member's join on A races their removal on B, in an open
// group: whichever the store commits first, the member ends out on both
// instances (a join before the removal is undone by it; one after waits
// for a moderator), and a moderator's put-user brings them back on both.
func TestModerationOrder_RejoinRacesRemovalInOpenGroup(t *testing.T) {
	envs := startCluster(t, 2)
	a, b := envs[0], envs[1]
	owner := a.owner
	oa, ob := a.connect(&owner), b.connect(&owner)
	held := 0
	for round := range rounds(t) {
		g := fmt.Sprintf("open-%d", round)
		member := newUser()
		ma := a.connect(&member)
		a.mustPublish(oa, mkEvent(owner, 9007, nostr.Tags{{"h", g}, {"public"}, {"open"}}, ""))
		a.mustPublish(ma, mkEvent(member, 9021, nostr.Tags{{"h", g}}, ""))
		a.mustPublish(ma, mkEvent(member, 9022, nostr.Tags{{"h", g}}, ""))

		var wg sync.WaitGroup
		var joinErr error
		wg.Add(2)
		// the join sets off up to 8 ms late, so that both orders come up
		// over the rounds (on its own it always commits first: A is local)
		lag := time.Duration(rand.IntN(8000)) * time.Microsecond
		go func() {
			defer wg.Done()
			time.Sleep(lag)
			ctx, cancel := answering()
			defer cancel()
			joinErr = ma.PublishAgain(ctx, mkEvent(member, 9021, nostr.Tags{{"h", g}}, "back"))
		}()
		go func() {
			defer wg.Done()
			b.mustPublish(ob, mkEvent(owner, 9001, nostr.Tags{{"h", g}, {"p", member.pk}}, ""))
		}()
		wg.Wait()
		switch {
		case joinErr == nil:
		case strings.Contains(joinErr.Error(), "restricted: your join request is pending"):
			held++
		default:
			t.Fatalf("round %d: the join racing the removal: %v", round, joinErr)
		}
		notMember(t, envs, member, g, false, fmt.Sprintf("round %d", round))
		for i, e := range envs {
			if got, _ := e.n.Groups().Snapshot(g); hasMemberKey(got.Members, member.pk) {
				t.Fatalf("round %d: instance %d holds the removed member", round, i)
			}
		}
		b.mustPublish(ob, mkEvent(owner, 9000, nostr.Tags{{"h", g}, {"p", member.pk}}, ""))
		for i, e := range envs {
			e.mustPublish(e.connect(&member), mkEvent(member, 9, nostr.Tags{{"h", g}}, fmt.Sprintf("back on %d", i)))
		}
	}
	t.Logf("%d of %d joins were held (decided after the removal)", held, rounds(t))
}

func hasMemberKey(m map[string][]string, pk string) bool {
	_, ok := m[pk]
	return ok
}
