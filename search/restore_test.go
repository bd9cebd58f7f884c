package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
)

// countAnalyses makes every index opened in the test count the texts its
// analyzer analyses (queries included), through the returned counter.
func countAnalyses(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	old := queryAnalyzer
	queryAnalyzer = func() (analysis.Analyzer, error) {
		a, err := old()
		return countingAnalyzer{a, &n}, err
	}
	t.Cleanup(func() { queryAnalyzer = old })
	return &n
}

type countingAnalyzer struct {
	analysis.Analyzer
	n *atomic.Int64
}

func (c countingAnalyzer) Analyze(b []byte) analysis.TokenStream {
	c.n.Add(1)
	return c.Analyzer.Analyze(b)
}

// restoreDocs is a corpus with every kind of doc a state keeps: memories
// in two scopes, versions of one address (the older superseded), chat
// messages of a thread, keyword-only lines and a volatile doc of a scope
// of its own.
func restoreDocs() []Doc {
	docs := snapDocs(400)
	docs = append(docs,
		Doc{ID: "v1", Kind: 30078, Pubkey: "pk1", D: "snow:memory:ops/backup", Topic: "ops/backup", Scope: "public",
			Text: "backups run nightly at two with restic", CreatedAt: 3000, Tags: map[string][]string{"t": {"ops"}}},
		Doc{ID: "v2", Kind: 30078, Pubkey: "pk1", D: "snow:memory:ops/backup", Topic: "ops/backup", Scope: "public",
			Text: "backups run nightly at three with restic", CreatedAt: 3001, Supersedes: []string{"v1"}, Version: 2,
			Confidence: 0.8, Model: "m-1", Source: "src", LearntFrom: "pk9", Tags: map[string][]string{"t": {"ops"}, "x": {"y", "z"}}},
		Doc{ID: "secret", Kind: 30078, Pubkey: "pk2", Scope: "private|pk2", Volatile: true,
			Text: "Zanzibarcanary: the vault code is under the walrus crane", CreatedAt: 3002},
	)
	for i := range 30 {
		docs = append(docs, Doc{ID: fmt.Sprintf("chat%02d", i), Kind: 9, Pubkey: "pk3", Group: "g1", Scope: "group:g1",
			Text: fmt.Sprintf("Alice: message %d about the harbour crane and the walrus", i), CreatedAt: int64(4000 + i),
			KeywordOnly: i%3 == 0, Tags: map[string][]string{"h": {"g1"}}})
	}
	return docs
}

var restoreQueries = []string{"walrus crane", "deploy otter", "backups restic", "harbour message", "launch diary harbour"}

// state is what of a state a restart must keep, beyond rankings.
func stateOf(ix *Index) map[string]any {
	versions := ix.Versions("30078:pk1:snow:memory:ops/backup")
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	st := ix.st
	parts := map[string][3]int{}
	for scope, p := range st.parts.byScope {
		parts[scope] = [3]int{p.docs, p.kw.Vocabulary(), p.chatN}
	}
	return map[string]any{"docs": len(st.docs), "disk": st.diskDocs, "parts": parts, "versions": versions,
		"superseded": len(st.superseded), "session": st.sessions.Key("chat05"), "vectors": st.vecs.Len()}
}

// A restart on a closed index reads its image: no doc is analysed again,
// and searches rank exactly as before the restart (scores, keyword ranks,
// floors); the volatile doc is gone, as after any restart. Without the
// image (removed here) Open analyses every doc of the log, which is what
// the counter counts.
func TestRestore_OpensWithoutAnalysing(t *testing.T) {
	for _, graph := range []bool{true, false} {
		t.Run(fmt.Sprintf("graph=%v", graph), func(t *testing.T) {
			if graph {
				withGraph(t)
			}
			analyses := countAnalyses(t)
			dir := t.TempDir()
			ix, err := Open(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			mustIndex(t, ix, restoreDocs()...)
			if err := ix.Remove(context.Background(), "s0003"); err != nil {
				t.Fatal(err)
			}
			mustIndex(t, ix, Doc{ID: "s0011", Scope: "public", Kind: 30078, Text: "replaced: the walrus crane", CreatedAt: 5000})
			graphWait(ix)
			if err := ix.Remove(context.Background(), "secret"); err != nil { // a restart drops it anyway
				t.Fatal(err)
			}
			want, wantState := explainAll(t, ix, restoreQueries...), stateOf(ix)
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}

			before := analyses.Load()
			ix = openTest(t, Options{Dir: dir})
			if n := analyses.Load() - before; n != 0 || !ix.Restored() {
				t.Fatalf("Open analysed %d texts (restored %v), want none", n, ix.Restored())
			}
			if graph != isFromSnap(ix) {
				t.Fatalf("vectors from the graph snapshot: %v, want %v", isFromSnap(ix), graph)
			}
			graphWait(ix)
			diffRanking(t, "after the restore", explainAll(t, ix, restoreQueries...), want)
			if got := stateOf(ix); !reflect.DeepEqual(got, wantState) {
				t.Fatalf("state after the restore:\n got %v\nwant %v", got, wantState)
			}
			// it goes on as any index: writes, removals, another restart
			mustIndex(t, ix, Doc{ID: "new", Scope: "public", Kind: 30078, Text: "a walrus crane at the harbour", CreatedAt: 9000})
			if err := ix.Remove(context.Background(), "s0005"); err != nil {
				t.Fatal(err)
			}
			want, wantState = explainAll(t, ix, restoreQueries...), stateOf(ix)
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			ix = openTest(t, Options{Dir: dir})
			if !ix.Restored() {
				t.Fatal("the second restart did not restore")
			}
			graphWait(ix)
			diffRanking(t, "after the second restore", explainAll(t, ix, restoreQueries...), want)
			if got := stateOf(ix); !reflect.DeepEqual(got, wantState) {
				t.Fatalf("state after the second restore:\n got %v\nwant %v", got, wantState)
			}

			// the same index replayed from its log analyses every doc
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "docs-1.image")); err != nil {
				t.Fatal(err)
			}
			before = analyses.Load()
			ix = openTest(t, Options{Dir: dir})
			if n := analyses.Load() - before; n < int64(ix.Count()) || ix.Restored() {
				t.Fatalf("a replay analysed %d texts for %d docs (restored %v)", n, ix.Count(), ix.Restored())
			}
			graphWait(ix)
			diffRanking(t, "after a replay", explainAll(t, ix, restoreQueries...), want)
		})
	}
}

// Nothing of a volatile doc reaches the image: not its id, words, scope
// or author. A part that mixes volatile docs with others leaves no image
// at all (its statistics hold the volatile docs' share).
func TestRestore_VolatileNeverInTheImage(t *testing.T) {
	withGraph(t)
	for name, scope := range map[string]string{"own scope": "private|pk2", "mixed scope": "public"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ix, err := Open(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			mustIndex(t, ix, snapDocs(200)...)
			mustIndex(t, ix, Doc{ID: "secretid", Kind: 30078, Pubkey: "pkzq", Scope: scope, Volatile: true,
				Text: "Zanzibarcanary: the vault code", CreatedAt: 3002, Tags: map[string][]string{"t": {"quuxtag"}}})
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			img, err := os.ReadFile(filepath.Join(dir, "docs-1.image"))
			if scope == "public" {
				if !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("an image of a part mixing volatile docs: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"secretid", "zanzibarcanari", "Zanzibarcanary", "vault", "pkzq", "private|pk2", "quuxtag"} {
				if bytes.Contains(img, []byte(s)) {
					t.Errorf("%q in the image", s)
				}
			}
			if !bytes.Contains(img, []byte("s0001")) {
				t.Fatal("the image does not hold the other docs: the test reads the wrong file")
			}
		})
	}
}

// An image that is not of this very log, or damaged, is not used: Open
// replays the log and ranks as before.
func TestRestore_BadImageReplaysTheLog(t *testing.T) {
	withGraph(t)
	build := func(t *testing.T) (string, map[string][]ranked, []byte) {
		dir := t.TempDir()
		ix, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		mustIndex(t, ix, restoreDocs()...)
		graphWait(ix)
		if err := ix.Remove(context.Background(), "secret"); err != nil {
			t.Fatal(err)
		}
		want := explainAll(t, ix, restoreQueries...)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		img, err := os.ReadFile(filepath.Join(dir, "docs-1.image"))
		if err != nil {
			t.Fatal(err)
		}
		return dir, want, img
	}
	for name, spoil := range map[string]func(t *testing.T, dir string, img []byte){
		"flipped byte": func(t *testing.T, dir string, img []byte) {
			img[len(img)/2] ^= 0x10
			writeFile(t, filepath.Join(dir, "docs-1.image"), img)
		},
		"truncated": func(t *testing.T, dir string, img []byte) {
			writeFile(t, filepath.Join(dir, "docs-1.image"), img[:len(img)-9])
		},
		"the log grew after it (a crash)": func(t *testing.T, dir string, img []byte) {
			ix := openTest(t, Options{Dir: dir})
			mustIndex(t, ix, Doc{ID: "late", Scope: "public", Kind: 30078, Text: "walrus crane late arrival", CreatedAt: 9999})
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "docs-1.image"), img) // the old one back
		},
		"another index's": func(t *testing.T, dir string, img []byte) {
			other := t.TempDir()
			ix, err := Open(Options{Dir: other})
			if err != nil {
				t.Fatal(err)
			}
			mustIndex(t, ix, restoreDocs()[:300]...)
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(other, "docs-1.image"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "docs-1.image"), b)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, want, img := build(t)
			spoil(t, dir, bytes.Clone(img))
			ix := openTest(t, Options{Dir: dir})
			if ix.Restored() {
				t.Fatal("a bad image was used")
			}
			graphWait(ix)
			if _, late, _ := ix.Get("late"); late {
				if indexOf(search(t, ix, Query{Text: "late arrival", Limit: 3}), "late") < 0 {
					t.Fatal("the doc logged after the image is not found")
				}
				return
			}
			diffRanking(t, "after the replay", explainAll(t, ix, restoreQueries...), want)
		})
	}
}

// A restored index has not read its log: CheckLog reads it through and
// finds damage there, which Open could not have seen.
func TestRestore_CheckLogFindsDamage(t *testing.T) {
	withGraph(t)
	dir := t.TempDir()
	ix, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustIndex(t, ix, snapDocs(300)...)
	graphWait(ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	flip(t, filepath.Join(dir, "docs-1.log"), 5000)
	ix = openTest(t, Options{Dir: dir})
	if !ix.Restored() {
		t.Fatal("not restored")
	}
	if err := ix.CheckLog(context.Background()); !errors.Is(err, ErrNeedsRebuild) {
		t.Fatalf("CheckLog over a damaged log: %v, want ErrNeedsRebuild", err)
	}
	clean := openTest(t, Options{Dir: t.TempDir()})
	mustIndex(t, clean, snapDocs(10)...)
	if err := clean.CheckLog(context.Background()); err != nil {
		t.Fatalf("CheckLog over a sound log: %v", err)
	}
}
