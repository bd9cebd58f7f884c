package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// withGraph makes every index of the test keep its vectors in a graph from
// the first doc, as an index past vector.Threshold does.
func withGraph(t *testing.T) {
	old := graphThreshold
	graphThreshold = 1
	t.Cleanup(func() { graphThreshold = old })
}

func snapDocs(n int) []Doc {
	topics := []string{"harbour crane", "walrus migration", "deploy friday", "otter diary", "launch plans"}
	out := make([]Doc, n)
	for i := range out {
		out[i] = Doc{ID: fmt.Sprintf("s%04d", i), Scope: []string{"public", "group:a"}[i%2], Kind: 30078,
			Text: fmt.Sprintf("note %d about the %s and the %s", i, topics[i%5], topics[(i/5)%5]), CreatedAt: int64(1000 + i)}
	}
	return out
}

// ranking is what a restart must keep of a search: the top ten in order,
// each with its keyword rank and score, its vector score and the floor it
// passed. (Vector ranks are left out: they rank by the query centred on
// the mean vector, which a loaded graph sums again from the stored half-
// precision vectors, so a near tie may swap.)
type ranked struct {
	ID          string
	BM25Rank    int
	BM25Score   float64
	VectorScore float64
	Floor       string
}

func explainAll(t *testing.T, ix *Index, queries ...string) map[string][]ranked {
	t.Helper()
	out := map[string][]ranked{}
	for _, q := range queries {
		for _, r := range search(t, ix, Query{Text: q, Limit: 10, Explain: true}) {
			ex := r.Explain
			out[q] = append(out[q], ranked{r.Doc.ID, ex.BM25Rank, ex.BM25Score, ex.VectorScore, ex.Floor})
		}
	}
	return out
}

func diffRanking(t *testing.T, what string, got, want map[string][]ranked) {
	t.Helper()
	for q, w := range want {
		if !reflect.DeepEqual(got[q], w) {
			t.Fatalf("%s, query %q:\n got %v\nwant %v", what, q, got[q], w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d queries answered, want %d", what, len(got), len(want))
	}
}

func isFromSnap(ix *Index) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.st.fromSnap
}

// Close leaves the vector graph beside the doc log and Open takes it
// instead of linking the log's vectors again; searches rank as before,
// and the snapshot is consumed (the log moves on from there).
func TestSnapshot_ReopenLoadsTheGraph(t *testing.T) {
	withGraph(t)
	dir := t.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustIndex(t, ix, snapDocs(600)...)
	if err := ix.Remove(context.Background(), "s0003", "s0010"); err != nil {
		t.Fatal(err)
	}
	mustIndex(t, ix, Doc{ID: "s0011", Scope: "public", Kind: 30078, Text: "replaced: the walrus crane", CreatedAt: 5000})
	graphWait(ix)
	queries := []string{"walrus crane", "deploy otter", "launch diary harbour"}
	before := explainAll(t, ix, queries...)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "vectors-1.snap")
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no snapshot after Close: %v", err)
	}
	ix = openTest(t, Options{Dir: dir})
	if !isFromSnap(ix) {
		t.Fatal("Open did not load the graph snapshot")
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Fatalf("snapshot still there after Open: %v", err)
	}
	graphWait(ix)
	diffRanking(t, "after the restart", explainAll(t, ix, queries...), before)
	mustIndex(t, ix, Doc{ID: "new", Scope: "public", Kind: 30078, Text: "a walrus crane at the harbour", CreatedAt: 9000})
	if res := search(t, ix, Query{Text: "walrus crane harbour", Limit: 3}); indexOf(res, "new") < 0 {
		t.Fatalf("a doc added after loading is not found: %v", ids(res))
	}
}

// A damaged, stale or foreign snapshot is never used: Open takes the
// vectors from the log and ranks as a fresh replay does.
func TestSnapshot_BadSnapshotFallsBackToTheLog(t *testing.T) {
	withGraph(t)
	queries := []string{"walrus crane", "deploy otter"}
	build := func(t *testing.T) (string, map[string][]ranked, []byte) {
		dir := t.TempDir()
		ix, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		mustIndex(t, ix, snapDocs(300)...)
		graphWait(ix)
		want := explainAll(t, ix, queries...)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "vectors-1.snap"))
		if err != nil {
			t.Fatal(err)
		}
		return dir, want, b
	}
	for name, spoil := range map[string]func(t *testing.T, dir string, snap []byte){
		"flipped byte": func(t *testing.T, dir string, snap []byte) {
			snap[len(snap)/3] ^= 0x40
			writeFile(t, filepath.Join(dir, "vectors-1.snap"), snap)
		},
		"an older format (another version, checksum right)": func(t *testing.T, dir string, snap []byte) {
			magic := []byte("snowclaw-vectors-")
			if !bytes.HasPrefix(snap, magic) || snap[len(magic)] < '2' {
				t.Fatalf("snapshot starts %q: where is its version?", snap[:min(len(snap), 20)])
			}
			snap[len(magic)]--
			body := snap[:len(snap)-4]
			binary.LittleEndian.PutUint32(snap[len(body):], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
			writeFile(t, filepath.Join(dir, "vectors-1.snap"), snap)
		},
		"missing": func(t *testing.T, dir string, snap []byte) {
			if err := os.Remove(filepath.Join(dir, "vectors-1.snap")); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, dir string, snap []byte) {
			writeFile(t, filepath.Join(dir, "vectors-1.snap"), snap[:len(snap)-100])
		},
		"a doc replaced after it": func(t *testing.T, dir string, snap []byte) {
			ix := openTest(t, Options{Dir: dir})
			mustIndex(t, ix, Doc{ID: "s0001", Scope: "group:a", Kind: 30078, Text: "note 1 about the walrus crane, rewritten", CreatedAt: 1001})
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "vectors-1.snap"), snap) // the old one back: same ids, one vector stale
		},
		"log grew after it (a crash)": func(t *testing.T, dir string, snap []byte) {
			ix := openTest(t, Options{Dir: dir})
			mustIndex(t, ix, Doc{ID: "late", Scope: "public", Kind: 30078, Text: "walrus crane late arrival", CreatedAt: 9999})
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "vectors-1.snap"), snap) // the old one back
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, want, snap := build(t)
			spoil(t, dir, bytes.Clone(snap))
			ix := openTest(t, Options{Dir: dir})
			if isFromSnap(ix) {
				t.Fatal("a bad snapshot was used")
			}
			graphWait(ix)
			got := explainAll(t, ix, queries...)
			if d, _, _ := ix.Get("s0001"); strings.Contains(d.Text, "rewritten") {
				return // ranks differ from before by design; isFromSnap is the point
			}
			if _, late, _ := ix.Get("late"); late {
				if indexOf(search(t, ix, Query{Text: "late arrival", Limit: 3}), "late") < 0 {
					t.Fatal("the doc logged after the snapshot is not found")
				}
				return
			}
			diffRanking(t, "after falling back", got, want)
		})
	}
}

// A volatile doc (a decrypted private memory) is in the graph while the
// relay runs but neither its id nor its text reaches the snapshot, and
// after a restart it is gone until its event is indexed again.
func TestSnapshot_VolatileNeverOnDisk(t *testing.T) {
	withGraph(t)
	dir := t.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const canary = "zebracanary4242"
	mustIndex(t, ix, snapDocs(200)...)
	mustIndex(t, ix, Doc{ID: "secret-" + canary, Scope: "private:alice", Text: "diary " + canary, Volatile: true})
	graphWait(ix)
	if res := search(t, ix, Query{Text: canary}); indexOf(res, "secret-"+canary) < 0 {
		t.Fatal("volatile doc not searchable")
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "vectors-1.snap"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(canary)) {
		t.Fatal("the volatile doc's id is in the snapshot")
	}
	ix = openTest(t, Options{Dir: dir})
	if !isFromSnap(ix) {
		t.Fatal("snapshot not used")
	}
	if _, ok, _ := ix.Get("secret-" + canary); ok {
		t.Fatal("volatile doc back after a restart")
	}
	if res := search(t, ix, Query{Text: "diary " + canary}); indexOf(res, "secret-"+canary) >= 0 {
		t.Fatal("volatile doc found after a restart")
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Docs replayed from the log share one copy of their author's key and
// their scope instead of one each (the decoder makes one per doc).
func TestReplay_SharesRepeatedStrings(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	pk := strings.Repeat("ab", 32)
	mustIndex(t, ix, Doc{ID: "x", Pubkey: pk, Source: pk, Scope: "group:team", Text: "walrus"},
		Doc{ID: "y", Pubkey: pk, Source: pk, Scope: "group:team", Text: "otter"})
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = openTest(t, Options{Dir: dir})
	ix.mu.RLock()
	x, y := ix.st.docs["x"], ix.st.docs["y"]
	ix.mu.RUnlock()
	if x.Pubkey != pk || y.Scope != "group:team" {
		t.Fatalf("docs changed: %+v %+v", x, y)
	}
	for _, pair := range [][2]string{{x.Pubkey, y.Pubkey}, {x.Source, y.Source}, {x.Pubkey, x.Source}, {x.Scope, y.Scope}} {
		if unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
			t.Fatalf("%q is held twice", pair[0])
		}
	}
}

// A replay counts as dead every record but each live doc's last put:
// replaced puts, deleted puts and the delete records themselves.
func TestReplay_CountsDeadRecords(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustIndex(t, ix, snapDocs(10)...)
	mustIndex(t, ix, Doc{ID: "s0001", Text: "replaced once"}, Doc{ID: "s0002", Text: "replaced once"})
	mustIndex(t, ix, Doc{ID: "s0001", Text: "replaced twice"})
	if err := ix.Remove(context.Background(), "s0003", "s0004"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = openTest(t, Options{Dir: dir})
	// 15 records (10 + 3 puts, 2 deletes), 8 live docs
	if ix.Count() != 8 || ix.st.log.Dead != 7 {
		t.Fatalf("after replay: %d docs, %d dead records; want 8 and 7", ix.Count(), ix.st.log.Dead)
	}
	if d, _, _ := ix.Get("s0001"); d.Text != "replaced twice" {
		t.Fatalf("s0001 = %q", d.Text)
	}
}
