package node_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/internal/testwait"
	searchidx "github.com/snowclaw/snowclaw/search"
)

// Finding 9: random bytes in a search segment were not noticed at start;
// the first search panicked inside bleve and the process exited, again
// after every restart. The keyword index now lives in RAM, rebuilt from
// the checksummed doc log; damage to anything under <data>/search is found
// on Open and rebuilt from the stored events, and a panic inside the
// engine is recovered, answered with a clear error and followed by a
// background rebuild.

// smashMiddle overwrites bytes in the middle of every file under dir.
func smashMiddle(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Size() == 0 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		junk := make([]byte, min(64, len(b)))
		_, _ = rand.Read(junk)
		copy(b[(len(b)-len(junk))/2:], junk)
		n++
		return os.WriteFile(p, b, 0o600)
	})
	if err != nil || n == 0 {
		t.Fatalf("smashing %s: %v (%d files)", dir, err, n)
	}
}

func truncateDocLog(t *testing.T, dir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "docs-*.log"))
	if len(logs) != 1 {
		t.Fatalf("doc logs %v", logs)
	}
	fi, err := os.Stat(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(logs[0], fi.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// oldLayout leaves a format-1 index with damaged bleve segments, as the
// relay before this fix wrote them.
func oldLayout(t *testing.T, dir string) {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(meta), `"format": 2`, `"format": 1`, 1)
	if old == string(meta) {
		t.Fatalf("meta.json without format 2: %s", meta)
	}
	seg := make([]byte, 4096)
	_, _ = rand.Read(seg)
	for name, b := range map[string][]byte{"meta.json": []byte(old), "bleve-1/store/000000000002.zap": seg, "bleve-1/store/root.bolt": seg[:512]} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAttack_CorruptSearchIndexRebuiltAtStart(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	var want []string
	for i := range 30 {
		evt := e.mustPublish(c, memory(a, fmt.Sprintf("fact/otter-%d", i), fmt.Sprintf("sea otters hold hands while sleeping, fact %d", i)))
		want = append(want, evt.ID)
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"bytes overwritten in the middle of every file", smashMiddle},
		{"doc log truncated", truncateDocLog},
		{"old layout with damaged bleve segments", oldLayout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.stop()
			tc.damage(t, filepath.Join(e.dir, "search"))
			e.start()
			got := search(t, e, nil, nostr.Filter{Search: "otters sleeping", Limit: 100})
			if len(got) != len(want) {
				t.Fatalf("after the damage the search finds %d of %d memories", len(got), len(want))
			}
			if bleves, _ := filepath.Glob(filepath.Join(e.dir, "search", "bleve-*")); len(bleves) != 0 {
				t.Fatalf("old index files left behind: %v", bleves)
			}
		})
	}
}

// A panic deep in a search (injected through searchidx.SetFaultHook) is
// recovered: the client gets a clear error, the index is rebuilt in the
// background, and searching works again afterwards.
func TestAttack_PanicInSearchRecovered(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	m := e.mustPublish(e.connect(nil), memory(a, "fact/otter", "sea otters hold hands while sleeping"))
	searchidx.SetFaultHook(func(op, text string) {
		if strings.Contains(text, "detonate") {
			panic("injected fault inside the search engine")
		}
	})
	defer searchidx.SetFaultHook(nil)

	_, closed := fetchOnce(t, e.connect(nil), nostr.Filter{Search: "detonate otters"})
	if closed != "error: search index is being rebuilt, try again shortly" {
		t.Fatalf("CLOSED %q, want the rebuild error", closed)
	}
	waitRebuilt(t, e)
	got := search(t, e, nil, nostr.Filter{Search: "otters sleeping"})
	if len(got) != 1 || got[0].ID != m.ID {
		t.Fatalf("after the recovered panic: %v", ids(got))
	}
	// and the relay still takes writes that search finds
	n := e.mustPublish(e.connect(nil), memory(a, "fact/walrus", "walruses sleep in the water"))
	if got := search(t, e, nil, nostr.Filter{Search: "walruses"}); len(got) == 0 || got[0].ID != n.ID {
		t.Fatalf("write after the rebuild not searchable: %v", ids(got))
	}
}

// A panic half-way through indexing a stored event (in the index worker,
// injected through search.SetFaultHook) loses nothing: the event is
// stored, the index is rebuilt from the store in the background, and the
// event is found afterwards.
func TestAttack_PanicInIndexingRecovered(t *testing.T) {
	e := startEnv(t, withSearch)
	a := newUser()
	c := e.connect(nil)
	before := e.mustPublish(c, memory(a, "fact/otter", "sea otters hold hands while sleeping"))
	var fired atomic.Bool
	searchidx.SetFaultHook(func(op, text string) {
		if op == "index" && strings.Contains(text, "kaboom") && fired.CompareAndSwap(false, true) {
			panic("injected fault while indexing")
		}
	})
	defer searchidx.SetFaultHook(nil)
	bad := e.mustPublish(c, memory(a, "fact/kaboom", "kaboom: walruses sleep in the water"))
	// a search applies the pending batch if the index worker has not yet;
	// while the rebuild runs it is told so, after it it is answered
	_, closed := fetchOnce(t, e.connect(nil), nostr.Filter{Search: "walruses"})
	if !fired.Load() {
		t.Fatal("the injected fault never fired: the test proves nothing")
	}
	if closed != "" && closed != "error: search index is being rebuilt, try again shortly" {
		t.Fatalf("CLOSED %q, want results or the rebuild error", closed)
	}
	waitRebuilt(t, e)
	for q, want := range map[string]string{"walruses water": bad.ID, "otters sleeping": before.ID} {
		if got := search(t, e, nil, nostr.Filter{Search: q}); len(got) == 0 || got[0].ID != want {
			t.Fatalf("%q after the rebuild: %v, want %s first", q, ids(got), want[:8])
		}
	}
}

// waitRebuilt polls the public health signal until no search rebuild is
// running (a barrier on the relay's own word, not a guess at its timing).
func waitRebuilt(t *testing.T, e *testEnv) {
	t.Helper()
	testwait.Within(t, 20*time.Second, "the search index rebuilt", func() bool {
		var h struct {
			Rebuilding bool `json:"search_rebuilding"`
		}
		if code, msg := e.v1(nil, "GET", "/api/v1/health", nil, &h); code != 200 {
			t.Fatalf("health %d %s", code, msg)
		}
		return !h.Rebuilding
	})
}
