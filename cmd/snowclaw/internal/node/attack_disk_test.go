package node_test

import (
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// aPetabyte is a disk reserve above the free space of any test machine:
// with it the relay sees its disk as full.
const aPetabyte = 1 << 30 // MiB

// TestAttack_DiskFullRefusesWritesAndRecovers is finding 14: a flood that
// filled the disk ended in SIGBUS inside badger's mmap. Below the reserve
// every write path (websocket, HTTP API) refuses with "error: disk full"
// before anything is stored, reads go on, health says so, and writes are
// accepted again once space is back, without a restart; nothing stored
// before is lost.
func TestAttack_DiskFullRefusesWritesAndRecovers(t *testing.T) {
	e := startEnv(t)
	c := e.connect(nil)
	u := newUser()
	kept := []string{e.mustPublish(c, mkEvent(u, 1, nil, "stored before the disk filled")).ID}
	health := func() map[string]any {
		var h map[string]any
		if code, msg := e.v1(nil, "GET", "/api/v1/health", nil, &h); code != 200 {
			t.Fatalf("health: %d %s", code, msg)
		}
		return h
	}
	storeAPI := func(content string) (nostr.Event, int, string) {
		mem := memory(u, "disk/"+content, content)
		code, msg := e.v1(&u, "POST", "/api/v1/memories", snowclaw.StoreRequest{Event: &mem}, nil)
		return mem, code, msg
	}

	e.r.SetMinFreeMB(aPetabyte)
	refused := []nostr.Event{mkEvent(u, 1, nil, "while the disk is full"), mkEvent(u, 0, nil, `{"name":"full"}`)}
	for _, evt := range refused {
		e.refusedWith(c, evt, "error: disk full")
	}
	mem, code, msg := storeAPI("while the disk is full")
	if code != 507 || !strings.HasPrefix(msg, "error: disk full") {
		t.Fatalf("HTTP store on a full disk: %d %q, want 507 error: disk full", code, msg)
	}
	refused = append(refused, mem)
	if h := health(); h["disk_full"] != true {
		t.Fatalf("health on a full disk: %v", h)
	}
	got, _ := fetch(t, c, nostr.Filter{IDs: ids(evPtrs(refused))})
	if len(got) != 0 {
		t.Fatalf("refused events were stored: %v", ids(got))
	}

	e.r.SetMinFreeMB(1) // space is back
	kept = append(kept, e.mustPublish(c, mkEvent(u, 1, nil, "after space came back")).ID)
	mem, code, msg = storeAPI("after space came back")
	if code != 201 {
		t.Fatalf("HTTP store after space came back: %d %q", code, msg)
	}
	kept = append(kept, mem.ID)
	if h := health(); h["disk_full"] != false {
		t.Fatalf("health after space came back: %v", h)
	}

	// the reserve from the options, at start: the relay opens, serves
	// what it has and refuses what is new
	e.opts.MinFreeMB = aPetabyte
	e.restart()
	c = e.connect(nil)
	e.refusedWith(c, mkEvent(u, 1, nil, "full at start"), "error: disk full")
	if got, _ := fetch(t, c, nostr.Filter{IDs: kept}); len(got) != len(kept) {
		t.Fatalf("after a restart on a full disk %d of %d stored events are served", len(got), len(kept))
	}
	e.opts.MinFreeMB = 1
	e.restart()
	e.mustPublish(e.connect(nil), mkEvent(u, 1, nil, "room again"))
}

func evPtrs(evs []nostr.Event) []*nostr.Event {
	out := make([]*nostr.Event, len(evs))
	for i := range evs {
		out[i] = &evs[i]
	}
	return out
}
