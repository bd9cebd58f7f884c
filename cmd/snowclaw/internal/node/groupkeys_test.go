package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/relay/store"
)

// failingStore refuses the writes of gift wraps to one key while fail
// says so: a store that errs for a while (a full disk, a database
// fail-over) under a real relay.
type failingStore struct {
	eventstore.Store
	to string

	mu     sync.Mutex
	fail   func(n int) bool // n: how many wraps to `to` were refused so far
	failed int
}

func (s *failingStore) SaveEvent(ctx context.Context, evt *nostr.Event) error {
	if evt.Kind == snowclaw.KindGiftWrap && evt.Tags.FindWithValue("p", s.to) != nil {
		s.mu.Lock()
		refuse := s.fail(s.failed)
		if refuse {
			s.failed++
		}
		s.mu.Unlock()
		if refuse {
			return errors.New("injected: the store is unavailable")
		}
	}
	// through the exact layer, as the relay writes when nothing wraps it
	return store.NewExact(s.Store).SaveEvent(ctx, evt)
}

// Unwrap lets the store's pager and change feed find the real store.
func (s *failingStore) Unwrap() eventstore.Store { return s.Store }

func (s *failingStore) refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// failingReplacer is failingStore over a store that settles replacements
// itself (PostgreSQL): the key records go on being replaced atomically.
type failingReplacer struct{ *failingStore }

func (s failingReplacer) ReplaceEvent(ctx context.Context, evt *nostr.Event) error {
	return s.Store.(store.Replacer).ReplaceEvent(ctx, evt)
}

func (s failingReplacer) ReplacesAtomically() {}

func withFailingStore(fs *failingStore) func(*node.Options) {
	return func(o *node.Options) {
		o.WrapStore = func(inner eventstore.Store) eventstore.Store {
			fs.Store = inner
			if _, ok := inner.(store.Replacer); ok {
				return failingReplacer{fs}
			}
			return fs
		}
	}
}

// TestGroupCrypt_FailedDeliveryIsSentAgain: the store fails the first
// write of dave's key delivery. Nobody re-adds him and nothing in the
// group changes, yet the relay sends the key again and he receives it.
func TestGroupCrypt_FailedDeliveryIsSentAgain(t *testing.T) {
	dave := newUser()
	fs := &failingStore{to: dave.pk, fail: func(n int) bool { return n == 0 }}
	e := startEnv(t, withKeyManager, withFailingStore(fs), func(o *node.Options) { o.GroupKeyRetry = 50 * time.Millisecond })
	oc, dc := e.connect(&e.owner), e.connect(&dave)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(dc, mkEvent(dave, 9021, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9002, nostr.Tags{{"h", "vault"}, {"encrypted"}}, ""))
	if fs.refused() != 1 {
		t.Fatalf("the store refused %d of dave's deliveries, want the first", fs.refused())
	}
	var got *keyring
	testwait.For(t, "dave's key after the failed delivery", func() bool {
		got = receiveKeys(t, dc, dave, e.agent.pk, "vault")
		return got.current == 1
	})
	if owner := receiveKeys(t, oc, e.owner, e.agent.pk, "vault"); owner.current != 1 || owner.keys[1] != got.keys[1] {
		t.Fatalf("the owner holds %v, dave %v: want one and the same version 1", owner.keys, got.keys)
	}
	// the record says so: nothing is owed to him any more
	e.waitKeyState(&e.owner, "vault", dave.pk, snowclaw.KeyDelivered)
}

// waitKeyState waits until the key status that u reads for group g says
// member is in state.
func (e *testEnv) waitKeyState(u *user, g, member, state string) map[string]any {
	e.t.Helper()
	var body map[string]any
	testwait.For(e.t, "member "+member[:8]+" "+state, func() bool {
		var code int
		code, body = e.api(u, "GET", "/api/v1/groups/"+g+"/keys", nil)
		if code != 200 {
			e.t.Fatalf("key status of %s: %d %v", g, code, body)
		}
		ms, _ := body["members"].([]any)
		for _, m := range ms {
			if m, _ := m.(map[string]any); m["pubkey"] == member {
				return m["state"] == state
			}
		}
		return false
	})
	return body
}

// TestGroupKeys_StatusShowsRetryAndNoKeys: the owner and a group admin
// see which members hold the current key, a delivery the store keeps
// failing as retrying until it is stored; a member, a stranger and an
// anonymous caller see nothing, whether or not the group exists; and no
// answer carries key material.
func TestGroupKeys_StatusShowsRetryAndNoKeys(t *testing.T) {
	dave, admin, stranger := newUser(), newUser(), newUser()
	var blocked sync.Mutex
	down := true
	fs := &failingStore{to: dave.pk, fail: func(int) bool { blocked.Lock(); defer blocked.Unlock(); return down }}
	e := startEnv(t, withKeyManager, withFailingStore(fs), func(o *node.Options) { o.GroupKeyRetry = 50 * time.Millisecond })
	oc, dc, ac := e.connect(&e.owner), e.connect(&dave), e.connect(&admin)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "vault"}, {"hidden"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9000, nostr.Tags{{"h", "vault"}, {"p", admin.pk, "admin"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9000, nostr.Tags{{"h", "vault"}, {"p", dave.pk}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "plain"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9002, nostr.Tags{{"h", "vault"}, {"encrypted"}}, ""))

	// the store keeps failing dave's delivery: he is retrying, the admin
	// delivered, in the owner's and the admin's view alike
	for _, u := range []*user{&e.owner, &admin} {
		st := e.waitKeyState(u, "vault", dave.pk, snowclaw.KeyRetrying)
		if st["version"] != float64(1) || st["encrypted"] != true {
			t.Fatalf("status %v: want version 1, encrypted", st)
		}
		e.waitKeyState(u, "vault", admin.pk, snowclaw.KeyDelivered)
	}
	testwait.For(t, "the relay trying dave's delivery again", func() bool { return fs.refused() >= 3 })
	blocked.Lock()
	down = false
	blocked.Unlock()
	e.waitKeyState(&admin, "vault", dave.pk, snowclaw.KeyDelivered)
	dk := receiveKeys(t, dc, dave, e.agent.pk, "vault")
	ak := receiveKeys(t, ac, admin, e.agent.pk, "vault")
	if dk.current != 1 || ak.current != 1 {
		t.Fatalf("dave holds version %d, the admin %d: want 1", dk.current, ak.current)
	}

	// the list: the owner's and the admin's name vault, not the plain group
	for _, u := range []*user{&e.owner, &admin} {
		code, body := e.api(u, "GET", "/api/v1/groups/keys", nil)
		gs, _ := body["groups"].([]any)
		if code != 200 || len(gs) != 1 || gs[0].(map[string]any)["group"] != "vault" {
			t.Fatalf("%s's list: %d %v", u.pk[:8], code, body)
		}
	}

	// nobody else: the same refusal for the hidden group and for none
	for name, u := range map[string]*user{"member": &dave, "stranger": &stranger} {
		var bodies []string
		for _, g := range []string{"vault", "plain", "nosuchgroup"} {
			code, body := e.api(u, "GET", "/api/v1/groups/"+g+"/keys", nil)
			msg, _ := body["error"].(string)
			if code != 403 || !strings.HasPrefix(msg, "restricted:") {
				t.Fatalf("%s reads %s's key status: %d %v", name, g, code, body)
			}
			bodies = append(bodies, msg)
		}
		if len(slices.Compact(bodies)) != 1 {
			t.Fatalf("%s tells the groups apart by the refusal: %v", name, bodies)
		}
		code, body := e.api(u, "GET", "/api/v1/groups/keys", nil)
		if gs, _ := body["groups"].([]any); code != 200 || len(gs) != 0 {
			t.Fatalf("%s's list: %d %v", name, code, body)
		}
	}
	for _, path := range []string{"/api/v1/groups/vault/keys", "/api/v1/groups/keys"} {
		if code, body := e.api(nil, "GET", path, nil); code != 401 {
			t.Fatalf("anonymous %s: %d %v", path, code, body)
		}
	}
	if code, body := e.api(&e.owner, "GET", "/api/v1/groups/nosuchgroup/keys", nil); code != 404 {
		t.Fatalf("the owner asking for no group: %d %v", code, body)
	}
	// the admin of one group is nobody in another
	if code, _ := e.api(&admin, "GET", "/api/v1/groups/plain/keys", nil); code != 403 {
		t.Fatalf("vault's admin reads plain's key status: %d", code)
	}

	// no key material anywhere in what the owner and the admin read
	for _, u := range []*user{&e.owner, &admin} {
		for _, path := range []string{"/api/v1/groups/vault/keys", "/api/v1/groups/keys"} {
			_, body := e.api(u, "GET", path, nil)
			raw, _ := json.Marshal(body)
			for _, k := range dk.keys {
				if strings.Contains(string(raw), k.Secret) || strings.Contains(string(raw), k.Pubkey) {
					t.Fatalf("%s answers with key material: %s", path, raw)
				}
			}
			if strings.Contains(string(raw), "secret") {
				t.Fatalf("%s has a secret field: %s", path, raw)
			}
		}
	}
}

// TestGroupCrypt_OwedDeliverySurvivesRestart: the record names the member
// whose delivery failed, so a relay restarted after the store recovers
// sends it at start, with no retry pass due and nobody re-adding him.
func TestGroupCrypt_OwedDeliverySurvivesRestart(t *testing.T) {
	dave := newUser()
	fs := &failingStore{to: dave.pk, fail: func(int) bool { return true }}
	e := startEnv(t, withKeyManager, withFailingStore(fs), func(o *node.Options) { o.GroupKeyRetry = time.Hour })
	oc, dc := e.connect(&e.owner), e.connect(&dave)
	e.mustPublish(oc, mkEvent(e.owner, 9007, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(dc, mkEvent(dave, 9021, nostr.Tags{{"h", "vault"}}, ""))
	e.mustPublish(oc, mkEvent(e.owner, 9002, nostr.Tags{{"h", "vault"}, {"encrypted"}}, ""))
	e.waitKeyState(&e.owner, "vault", dave.pk, snowclaw.KeyRetrying)
	if got := receiveKeys(t, dc, dave, e.agent.pk, "vault"); got.current != 0 {
		t.Fatalf("dave holds version %d while the store refuses his delivery", got.current)
	}

	e.opts.WrapStore = nil // the store works again
	e.restart()
	dc = e.connect(&dave)
	// over a shared store the keys are managed by the leader, which the
	// restarted node becomes a moment after it serves
	testwait.For(t, "dave holding version 1 after the restart", func() bool {
		return receiveKeys(t, dc, dave, e.agent.pk, "vault").current == 1
	})
	e.waitKeyState(&e.owner, "vault", dave.pk, snowclaw.KeyDelivered)
}
