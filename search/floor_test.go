package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestFloor_CalibratedAndRecorded: the vector floor comes from the
// index's own docs once there are enough of them, is written to
// meta.json and read back on open.
func TestFloor_CalibratedAndRecorded(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, Options{Dir: dir})
	if got := ix.VectorFloor(); got != builtinFloor {
		t.Fatalf("empty index floor %v, want the built-in default %v", got, builtinFloor)
	}
	var docs []Doc
	words := []string{"harbour", "walrus", "kernel", "pasta", "guitar", "tax", "garden", "rocket", "violin", "cheese", "glacier", "python"}
	for i := range 3 * minFloorDocs {
		docs = append(docs, Doc{ID: fmt.Sprint("d", i), Text: fmt.Sprintf("%s and %s on day %d", words[i%len(words)], words[(i*5+3)%len(words)], i)})
	}
	mustIndex(t, ix, docs...)
	floor := ix.VectorFloor()
	if floor == builtinFloor || floor <= 0 || floor >= 1 {
		t.Fatalf("floor %v after %d docs: not calibrated", floor, len(docs))
	}
	var m indexMeta
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.VectorFloor != floor || m.FloorDocs < minFloorDocs {
		t.Fatalf("meta %s does not record floor %v (%v)", b, floor, err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix2 := openTest(t, Options{Dir: dir})
	if got := ix2.VectorFloor(); got != floor {
		t.Fatalf("reopened floor %v, want the recorded %v", got, floor)
	}
}

// TestFloor_SearchAndMatchAgree: what Search returns for a query is what
// Match admits, doc by doc, and nothing passes for a query that shares
// nothing with the docs.
func TestFloor_SearchAndMatchAgree(t *testing.T) {
	ix := openTest(t, Options{})
	docs := memDocs()
	mustIndex(t, ix, docs...)
	ctx := context.Background()
	for _, q := range []string{"zzzqqq", "banana smoothie recipe", "the of and", "rust", "deploy friday", "error handling"} {
		res := search(t, ix, Query{Text: q, Limit: 100, Explain: true})
		got := map[string]string{}
		for _, r := range res {
			got[r.Doc.ID] = r.Explain.Floor
		}
		for _, d := range docs {
			floor, ok, err := ix.Match(ctx, q, d)
			if err != nil {
				t.Fatal(err)
			}
			if f, found := got[d.ID]; found != ok || (ok && f != floor) {
				t.Errorf("%q on %s: search says %v (%q), Match says %v (%q)", q, d.ID, found, f, ok, floor)
			}
		}
	}
	for _, q := range []string{"zzzqqq", "banana smoothie recipe", "the of and"} {
		if res := search(t, ix, Query{Text: q}); len(res) != 0 {
			t.Errorf("%q found %v", q, ids(res))
		}
	}
}
