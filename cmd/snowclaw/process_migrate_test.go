package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/pgtest"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/relay/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// storeContents is every event of a store, as its JSON by id.
func storeContents(t *testing.T, o node.StoreOptions, data string) map[string]string {
	t.Helper()
	st, err := node.OpenStore(context.Background(), o, data, store.PageSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := store.All(context.Background(), st, nostr.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(all))
	for _, e := range all {
		b, _ := json.Marshal(e)
		out[e.ID] = string(b)
	}
	return out
}

// plantStore hands fn the store of data, opened while no relay runs.
func plantStore(t *testing.T, o node.StoreOptions, data string, fn func(*store.Exact)) {
	t.Helper()
	st, err := node.OpenStore(context.Background(), o, data, store.PageSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

// groupOrder is the ids of a store's group events in its order.
func groupOrder(t *testing.T, o node.StoreOptions, data string) []string {
	t.Helper()
	var out []string
	plantStore(t, o, data, func(st *store.Exact) {
		err := store.EachInOrder(context.Background(), st, nostr.Filter{Kinds: snowclaw.GroupStateKinds}, func(evt *nostr.Event, _ int64) bool {
			out = append(out, evt.ID)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	return out
}

func sameContents(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for id, w := range want {
		if got[id] != w {
			t.Fatalf("%s: event %s is %q, want %q", what, id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
}

func migrate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, snowclawBin(t), append([]string{"migrate"}, args...)...).CombinedOutput()
	return string(out), err
}

// TestProcess_MigrateBadgerPostgresBadger moves a relay's store from
// badger to PostgreSQL and back with the binary, compares every event at
// each step, serves the PostgreSQL copy to a websocket client, and
// refuses to copy into a store that already holds events.
func TestProcess_MigrateBadgerPostgresBadger(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	url := pgtest.New(t)
	data := t.TempDir()
	c := startChild(t, data)
	r, err := wsclient.Dial(c.url)
	if err != nil {
		t.Fatal(err)
	}
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	now := nostr.Now()
	publish := func(kind int, at nostr.Timestamp, tags nostr.Tags, content string) nostr.Event {
		evt := nostr.Event{Kind: kind, CreatedAt: at, Tags: tags, Content: content}
		if evt.Tags == nil {
			evt.Tags = nostr.Tags{}
		}
		if err := evt.Sign(sk); err != nil {
			t.Fatal(err)
		}
		if err := r.Publish(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
		return evt
	}
	for i := range 1200 { // more than a page, many in one second
		publish(1, now-nostr.Timestamp(i%3), nostr.Tags{{"t", "migrate"}}, fmt.Sprint("note ", i, " with 'quotes'; DROP TABLE events; --"))
	}
	publish(0, now-10, nil, `{"name":"old"}`)
	profile := publish(0, now-5, nil, `{"name":"new"}`)
	publish(30023, now-10, nostr.Tags{{"d", "post"}}, "post v1")
	post := publish(30023, now-5, nostr.Tags{{"d", "post"}}, "post v2")
	r.Close()
	c.cmd.Process.Signal(syscall.SIGTERM)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, c.log)
	}
	// group state is derived in the store's order, not by created_at:
	// events planted newest first must keep their order in the copy
	var order []string
	plantStore(t, node.StoreOptions{}, data, func(st *store.Exact) {
		for i := range 5 {
			evt := nostr.Event{Kind: 9000 + i%2, CreatedAt: now - nostr.Timestamp(i), Tags: nostr.Tags{{"h", "crew"}, {"p", pk}}}
			if err := evt.Sign(sk); err != nil {
				t.Fatal(err)
			}
			if err := st.SaveEvent(context.Background(), &evt); err != nil {
				t.Fatal(err)
			}
			order = append(order, evt.ID)
		}
	})
	source := storeContents(t, node.StoreOptions{}, data)
	if len(source) < 1202 || source[profile.ID] == "" || source[post.ID] == "" {
		t.Fatalf("the source holds %d events; want the 1,200 notes and the newest profile and post", len(source))
	}

	out, err := migrate(t, "--from", "badger:"+data, "--to", url)
	if err != nil || !strings.Contains(out, "counts verified") {
		t.Fatalf("badger → postgres: %v\n%s", err, out)
	}
	pg := node.StoreOptions{Backend: node.BackendPostgres, PostgresURL: url}
	sameContents(t, "postgres copy", storeContents(t, pg, ""), source)
	if got := groupOrder(t, pg, ""); !slices.Equal(got, order) {
		t.Fatalf("the copy's order of group events %v, the source's %v", got, order)
	}

	// a second copy into the now non-empty target is refused, untouched
	out, err = migrate(t, "--from", "badger:"+data, "--to", url)
	if err == nil || !strings.Contains(out, "already holds events") || !strings.Contains(out, "--force") {
		t.Fatalf("copy into a non-empty target: %v\n%s", err, out)
	}
	if out, err = migrate(t, "--from", "badger:"+data, "--to", url, "--force"); err != nil || !strings.Contains(out, "counts verified") {
		t.Fatalf("--force over the same events: %v\n%s", err, out)
	}
	sameContents(t, "postgres after --force", storeContents(t, pg, ""), source)

	// a relay served from the PostgreSQL copy answers with it
	c2 := startChild(t, t.TempDir(), "--store-url", url)
	r2, err := wsclient.Dial(c2.url)
	if err != nil {
		t.Fatal(err)
	}
	got, closed, err := r2.Fetch(nostr.Filter{Authors: []string{pk}, Kinds: []int{0, 30023}}, 10*time.Second)
	if err != nil || closed != "" || len(got) != 2 {
		t.Fatalf("REQ to the relay on postgres: %d events, CLOSED %q, err %v; want the profile and the post", len(got), closed, err)
	}
	r2.Close()
	c2.cmd.Process.Signal(syscall.SIGTERM)
	if err := c2.cmd.Wait(); err != nil {
		t.Fatalf("relay on postgres, exit after SIGTERM: %v\n%s", err, c2.log)
	}

	back := t.TempDir()
	if out, err := migrate(t, "--from", url, "--to", "badger:"+back); err != nil || !strings.Contains(out, "counts verified") {
		t.Fatalf("postgres → badger: %v\n%s", err, out)
	}
	want := storeContents(t, pg, "")
	sameContents(t, "badger copy of the postgres store", storeContents(t, node.StoreOptions{}, back), want)
	for id := range source {
		if want[id] == "" && id != "" {
			// the relay on postgres may have added its own events, never lost one
			t.Fatalf("event %s of the source is missing after the round trip", id)
		}
	}
}
