package node_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testdisk"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/relay/store"
)

// onSmallDisk starts a relay whose data directory is a tmpfs of sizeMB
// MiB, guarded by the smallest reserve the config accepts.
func onSmallDisk(t *testing.T, sizeMB int) (*testEnv, string) {
	t.Helper()
	if os.Getenv("SNOWCLAW_TEST_STORE") == node.BackendPostgres {
		t.Skip("the disk filled is badger's: over PostgreSQL the events are not on the data volume")
	}
	disk := testdisk.Small(t, sizeMB)
	e := startEnv(t, func(o *node.Options) {
		o.DataDir = disk
		o.MinFreeMB = store.BadgerMinFree.MB()
	})
	return e, disk
}

// bulky is an event of about 60 KiB of content, near the default limit,
// so that a flood fills the disk in a few thousand events.
func bulky(u user) nostr.Event {
	b := make([]byte, 30_000)
	rand.Read(b)
	return mkEvent(u, 1, nostr.Tags{{"t", "flood"}}, hex.EncodeToString(b))
}

// TestAttack_FloodOnASmallDiskIsRefusedNotACrash: with the smallest reserve
// the config accepts, a stranger writing as fast as the relay answers,
// over several connections, fills a real (tmpfs) disk. Before, a small
// reserve let badger fault on its memtable's mmap (SIGBUS, the process
// gone) because the guard measured once a second and did not count
// badger's own flushes and compactions. Now every write past the reserve
// is refused with "error: disk full", the relay keeps answering, and
// every event it acknowledged is served, then and after a restart.
func TestAttack_FloodOnASmallDiskIsRefusedNotACrash(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a 320 MiB filesystem; go test without -short runs it")
	}
	size := 320 // about 110 MiB above the reserve: flushes and a level-0 compaction near the edge
	if raceEnabled {
		size = 240 // a few flushes only: the detector slows the flood tenfold
	}
	e, disk := onSmallDisk(t, size)
	const writers, refusalsEach = 4, 40
	var mu sync.Mutex
	var acked []string
	var failures []string
	var wg sync.WaitGroup
	ctx := testwait.Context(t, 5*answerWait)
	for range writers {
		c := e.connect(nil)
		u := newUser()
		wg.Go(func() {
			refused := 0
			for refused < refusalsEach && ctx.Err() == nil {
				evt := bulky(u)
				err := c.Publish(ctx, evt)
				mu.Lock()
				switch r, ok := errors.AsType[*wsclient.Refused](err); {
				case err == nil:
					acked = append(acked, evt.ID)
				case ok && strings.HasPrefix(r.Reason, "error: disk full"):
					refused++
				default:
					failures = append(failures, err.Error())
					refused = refusalsEach
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("publishing on a filling disk: %v", failures)
	}
	if ctx.Err() != nil {
		t.Fatalf("the disk did not fill within the bound: %d events acknowledged, %d MiB free", len(acked), testdisk.Free(t, disk)>>20)
	}
	free := testdisk.Free(t, disk)
	t.Logf("%d events acknowledged before every writer was refused %d times; %d MiB left of the reserve's %d", len(acked), refusalsEach, free>>20, store.BadgerMinFree.MB())
	if len(acked) < 100 {
		t.Fatalf("only %d events were stored before the disk counted as full: the test filled nothing", len(acked))
	}
	servesAll := func(when string) {
		t.Helper()
		c := e.connect(nil)
		for i := 0; i < len(acked); i += 200 {
			want := acked[i:min(i+200, len(acked))]
			got, closed := fetch(t, c, nostr.Filter{IDs: want, Limit: len(want)})
			if closed != "" || len(got) != len(want) {
				t.Fatalf("%s: %d of %d acknowledged events served (closed %q)", when, len(got), len(want), closed)
			}
		}
	}
	servesAll("on the full disk")
	e.restart()
	servesAll("after a restart on the full disk")
}

// TestAttack_RestartOnAFullDiskIsReadOnly: a relay started on a disk
// below its reserve, even one with 1 MiB left, does not open badger for
// writing (its start may flush and compact more than is left): it opens
// it read-only, says so, serves what it holds, refuses every write with
// "error: disk full", and takes writes again once it is opened with
// space.
func TestAttack_RestartOnAFullDiskIsReadOnly(t *testing.T) {
	e, disk := onSmallDisk(t, 320)
	c := e.connect(nil)
	u := newUser()
	var kept []string
	for i := range 20 {
		kept = append(kept, e.mustPublish(c, mkEvent(u, 1, nil, "before the disk filled "+string(rune('a'+i)))).ID)
	}
	if e.r.StoreReadOnly() {
		t.Fatal("the store is read-only with the disk empty")
	}
	e.stop()
	fill := testdisk.Fill(t, disk, 0) // someone else filled the disk
	for _, left := range []int{0, store.BadgerMinFree.MB() - 1} {
		fill.To(left)
		e.start()
		if !e.r.StoreReadOnly() || !e.r.DiskFull() {
			t.Fatalf("%d MiB free: read-only %v, disk full %v", left, e.r.StoreReadOnly(), e.r.DiskFull())
		}
		c = e.connect(nil)
		if got, _ := fetch(t, c, nostr.Filter{IDs: kept}); len(got) != len(kept) {
			t.Fatalf("%d MiB free: %d of %d stored events served", left, len(got), len(kept))
		}
		e.refusedWith(c, mkEvent(u, 1, nil, "on a full disk"), "error: disk full: the relay started with")
		var h map[string]any
		if code, msg := e.v1(nil, "GET", "/api/v1/health", nil, &h); code != 200 || h["disk_full"] != true {
			t.Fatalf("%d MiB free: health %d %s %v", left, code, msg, h)
		}
		e.stop()
	}
	fill.Remove()
	e.start()
	if e.r.StoreReadOnly() {
		t.Fatal("the store is still read-only with the space back")
	}
	c = e.connect(nil)
	kept = append(kept, e.mustPublish(c, mkEvent(u, 1, nil, "with space again")).ID)
	if got, _ := fetch(t, c, nostr.Filter{IDs: kept}); len(got) != len(kept) {
		t.Fatalf("%d of %d events served once space is back", len(got), len(kept))
	}
}

// TestAttack_NoStoreOnAFullDiskIsAClearError: with no store yet and no
// room to make one, the relay does not start, and says why.
func TestAttack_NoStoreOnAFullDiskIsAClearError(t *testing.T) {
	e, disk := onSmallDisk(t, 320)
	e.stop()
	testdisk.Fill(t, disk, 8)
	o := e.opts
	o.DataDir = disk + "/fresh"
	_, err := node.New(context.Background(), o)
	if !errors.Is(err, store.ErrDiskFull) || !strings.Contains(err.Error(), "no store yet") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("starting with no store on a full disk: %v", err)
	}
}
