package rights

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// erasedAt is the fixed clock of the erasure tests.
var erasedAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openErasedAt(t *testing.T, path string, now time.Time) *Erased {
	t.Helper()
	e, err := OpenErased(path)
	if err != nil {
		t.Fatal(err)
	}
	e.now = func() time.Time { return now }
	t.Cleanup(func() { e.Close() })
	return e
}

func TestErased_Blocks(t *testing.T) {
	_, agent, _ := newKey(t)
	_, alice, aliceNpub := newKey(t)
	T := nostr.Timestamp(erasedAt.Unix())
	npubD := snowclaw.PrefixMemoryNpub + aliceNpub
	itemD := "snow:memory:user/" + aliceNpub + "/preferences/abc"

	e := openErasedAt(t, filepath.Join(t.TempDir(), "erased"), erasedAt)
	if err := e.AddIDs(fakeID("chat")); err != nil {
		t.Fatal(err)
	}
	if err := e.AddAddresses("30078:"+agent+":"+npubD, "30078:"+agent+":"+itemD, "0:"+aliceNpub+":"); err != nil {
		t.Fatal(err)
	}
	if err := e.AddAuthors(alice); err != nil {
		t.Fatal(err)
	}

	addressable := func(pk, d string, at nostr.Timestamp) *nostr.Event {
		return &nostr.Event{ID: fakeID(d + at.Time().String()), PubKey: pk, Kind: 30078, CreatedAt: at, Tags: nostr.Tags{{"d", d}}}
	}
	tests := []struct {
		name string
		evt  *nostr.Event
		want bool
	}{
		{"erased id", &nostr.Event{ID: fakeID("chat"), PubKey: agent, Kind: 9, CreatedAt: T + 100}, true},
		{"erased id upper case", &nostr.Event{ID: strings.ToUpper(fakeID("chat")), PubKey: agent, Kind: 9}, true},
		{"other id", &nostr.Event{ID: fakeID("other"), PubKey: agent, Kind: 9, CreatedAt: T - 100}, false},
		{"address older version", addressable(agent, npubD, T-3600), true},
		{"address version at erasure", addressable(agent, npubD, T), true},
		{"address new version", addressable(agent, npubD, T+1), false},
		{"second address older", addressable(agent, itemD, T-1), true},
		{"same d other author", addressable(strings.Repeat("ab", 32), npubD, T-1), false},
		{"other d", addressable(agent, npubD+"x", T-1), false},
		{"same d other kind", &nostr.Event{ID: fakeID("k"), PubKey: agent, Kind: 30023, CreatedAt: T - 1, Tags: nostr.Tags{{"d", npubD}}}, false},
		{"replaceable by npub address", &nostr.Event{ID: fakeID("p"), PubKey: alice, Kind: 0, CreatedAt: T + 50}, false},
		{"regular kind ignores address", &nostr.Event{ID: fakeID("r"), PubKey: agent, Kind: 1, CreatedAt: T - 1, Tags: nostr.Tags{{"d", npubD}}}, false},
		{"erased author old event", &nostr.Event{ID: fakeID("old"), PubKey: alice, Kind: 9, CreatedAt: T - 10}, true},
		{"erased author new event", &nostr.Event{ID: fakeID("new"), PubKey: alice, Kind: 9, CreatedAt: T + 10}, false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.Blocks(snowclaw.ReadEvent(tc.evt)); got != tc.want {
				t.Errorf("Blocks = %v, want %v", got, tc.want)
			}
		})
	}
	if got := e.Len(); got != 5 {
		t.Errorf("Len = %d, want 5 (1 id, 3 addresses, 1 author)", got)
	}
	if at, ok := e.ErasedAt("30078:" + agent + ":" + npubD); !ok || !at.Equal(erasedAt) {
		t.Errorf("ErasedAt = %v, %v; want %v", at, ok, erasedAt)
	}
	if _, ok := e.ErasedAt("30078:" + agent + ":never"); ok {
		t.Error("ErasedAt of an address never erased reported true")
	}
}

func TestErased_SurvivesReopenWithoutPlainData(t *testing.T) {
	_, agent, _ := newKey(t)
	_, alice, aliceNpub := newKey(t)
	path := filepath.Join(t.TempDir(), "sub", "erased.list")
	addr := "30078:" + agent + ":" + snowclaw.PrefixMemoryNpub + aliceNpub
	old := &nostr.Event{ID: fakeID("v1"), PubKey: agent, Kind: 30078, CreatedAt: nostr.Timestamp(erasedAt.Unix() - 60), Tags: nostr.Tags{{"d", snowclaw.PrefixMemoryNpub + aliceNpub}}}
	chat := &nostr.Event{ID: fakeID("chat"), PubKey: alice, Kind: 9}

	e := openErasedAt(t, path, erasedAt)
	if err := e.AddIDs(chat.ID, chat.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.AddAddresses(addr); err != nil {
		t.Fatal(err)
	}
	if err := e.AddAuthors(aliceNpub); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e2 := openErasedAt(t, path, erasedAt.Add(time.Hour))
	if !e2.Blocks(snowclaw.ReadEvent(old)) || !e2.Blocks(snowclaw.ReadEvent(chat)) || e2.Len() != 3 {
		t.Errorf("after reopen: blocks old=%v chat=%v, Len=%d; want true, true, 3", e2.Blocks(snowclaw.ReadEvent(old)), e2.Blocks(snowclaw.ReadEvent(chat)), e2.Len())
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{alice, aliceNpub, aliceNpub[5:25], agent, "snowclaw:memory", "30078"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("erasure file contains %q in plain text:\n%s", secret, data)
		}
	}
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Errorf("file has %d lines, want 3 (the duplicate id written once):\n%s", n, data)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestErased_LaterErasureMovesTimeForward(t *testing.T) {
	_, agent, _ := newKey(t)
	path := filepath.Join(t.TempDir(), "erased")
	addr := "30078:" + agent + ":snow:memory:project/x"
	version := func(at time.Time) *nostr.Event {
		return &nostr.Event{ID: fakeID(at.String()), PubKey: agent, Kind: 30078, CreatedAt: nostr.Timestamp(at.Unix()), Tags: nostr.Tags{{"d", "snow:memory:project/x"}}}
	}
	rewritten := version(erasedAt.Add(5 * time.Second))

	e := openErasedAt(t, path, erasedAt)
	e.AddAddresses(addr)
	if e.Blocks(snowclaw.ReadEvent(rewritten)) {
		t.Fatal("a version written after the erasure is blocked")
	}
	e.now = func() time.Time { return erasedAt.Add(10 * time.Second) }
	e.AddAddresses(addr)
	if !e.Blocks(snowclaw.ReadEvent(rewritten)) {
		t.Error("second erasure did not cover the rewritten version")
	}
	e.Close()

	e2 := openErasedAt(t, path, erasedAt)
	if !e2.Blocks(snowclaw.ReadEvent(rewritten)) {
		t.Error("after reopen the earlier erasure time won over the later one")
	}
	e2.now = func() time.Time { return erasedAt } // an older clock cannot shorten the block
	e2.AddAddresses(addr)
	if !e2.Blocks(snowclaw.ReadEvent(rewritten)) {
		t.Error("an earlier erasure time unblocked a version")
	}
}

func TestErased_RefusesBadInput(t *testing.T) {
	_, agent, _ := newKey(t)
	path := filepath.Join(t.TempDir(), "erased")
	e := openErasedAt(t, path, erasedAt)
	tests := []struct {
		name string
		add  func() error
	}{
		{"short id", func() error { return e.AddIDs(fakeID("ok"), "abc") }},
		{"non-hex id", func() error { return e.AddIDs(strings.Repeat("zz", 32)) }},
		{"address without d part", func() error { return e.AddAddresses("30078:" + agent) }},
		{"address with bad kind", func() error { return e.AddAddresses("x:" + agent + ":d") }},
		{"address with bad pubkey", func() error { return e.AddAddresses("30078:alice:d") }},
		{"bad author", func() error { return e.AddAuthors("alice") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.add(); err == nil {
				t.Error("accepted")
			}
		})
	}
	if e.Len() != 0 {
		t.Errorf("Len = %d after only bad input, want 0", e.Len())
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("file written after only bad input: %q", data)
	}
}

func TestErased_TornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "erased")
	e := openErasedAt(t, path, erasedAt)
	e.AddIDs(fakeID("a"))
	e.Close()
	appendRaw(t, path, "id "+fakeID("b")[:20])

	e2 := openErasedAt(t, path, erasedAt)
	if e2.Len() != 1 || e2.Blocks(snowclaw.ReadEvent(&nostr.Event{ID: fakeID("b")})) {
		t.Fatalf("torn id was loaded: Len=%d", e2.Len())
	}
	if err := e2.AddIDs(fakeID("c")); err != nil {
		t.Fatal(err)
	}
	e2.Close()
	e3 := openErasedAt(t, path, erasedAt)
	if e3.Len() != 2 || !e3.Blocks(snowclaw.ReadEvent(&nostr.Event{ID: fakeID("c")})) {
		t.Errorf("after torn line and append: Len=%d, want 2 with c blocked", e3.Len())
	}
}
