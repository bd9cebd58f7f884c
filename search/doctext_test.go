package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// textDocs are memories with tags, a speaker turn and a chat message.
func textDocs() []Doc {
	docs := memDocs()
	for i := range docs {
		docs[i].D = "snow:memory:" + docs[i].Topic
		docs[i].Tags = map[string][]string{"d": {docs[i].D}, "t": {"notes", "x" + docs[i].ID}}
	}
	return append(docs,
		Doc{ID: "turn", Kind: 30078, D: "snow:memory:turn", Text: "Melanie: I painted a lake sunrise last year", CreatedAt: 600,
			Tags: map[string][]string{"d": {"snow:memory:turn"}, "-": {""}}},
		Doc{ID: "chat", Kind: 9, Group: "g", Text: "the badger store compacts its tables at night", CreatedAt: 700,
			Tags: map[string][]string{"h": {"g"}}},
		Doc{ID: "secret", Kind: 30078, D: "snow:memory:s", Text: "the private badger key rotation plan", Volatile: true, CreatedAt: 800,
			Tags: map[string][]string{"d": {"snow:memory:s"}, "p": {"abc"}}},
	)
}

// TestDocText_NotInRAM: a doc in the doc log keeps neither its text nor
// its tag map in RAM, yet every result, Get and Accept see them as
// indexed, exactly as an index without a directory (all in RAM) shows
// them. A volatile doc keeps its text in RAM: it is not on disk.
func TestDocText_NotInRAM(t *testing.T) {
	disk := openTest(t, Options{})
	ram, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ram.Close() })
	mustIndex(t, disk, textDocs()...)
	mustIndex(t, ram, textDocs()...)

	for _, d := range textDocs() {
		in := disk.st.docs[d.ID]
		if d.Volatile {
			if in.Text != d.Text {
				t.Fatalf("volatile %s: text %q in RAM, want %q", d.ID, in.Text, d.Text)
			}
		} else if in.Text != "" || in.off == 0 {
			t.Fatalf("%s: text %q in RAM (offset %d), want it in the doc log only", d.ID, in.Text, in.off)
		}
		if in.Tags != nil {
			t.Fatalf("%s: tag map %v in RAM, want it packed", d.ID, in.Tags)
		}
		got, ok, err := disk.Get(d.ID)
		if err != nil || !ok || got.Text != d.Text || !reflect.DeepEqual(got.Tags, d.Tags) {
			t.Fatalf("Get(%s) = %+v %v %v, want text %q tags %v", d.ID, got, ok, err, d.Text, d.Tags)
		}
		if m, _ := disk.Meta(d.ID); !reflect.DeepEqual(m.Tags, d.Tags) || m.Address() != d.Address() {
			t.Fatalf("Meta(%s) = %+v", d.ID, m)
		}
	}
	for _, q := range []string{"badger", "what did Melanie paint?", "alice german answers", "notes"} {
		var seen []map[string][]string
		query := Query{Text: q, Explain: true, Accept: func(d Doc) bool { seen = append(seen, d.Tags); return true }}
		a, b := search(t, disk, query), search(t, ram, query)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%q: %d results from disk, %d from RAM", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Doc.ID != b[i].Doc.ID || a[i].Score != b[i].Score || a[i].Doc.Text != b[i].Doc.Text ||
				!reflect.DeepEqual(a[i].Doc.Tags, b[i].Doc.Tags) || *a[i].Explain != *b[i].Explain {
				t.Fatalf("%q result %d: disk %+v, RAM %+v", q, i, a[i], b[i])
			}
			if a[i].Doc.Text == "" || seen[i] == nil {
				t.Fatalf("%q result %d: text %q, Accept saw tags %v", q, i, a[i].Doc.Text, seen[i])
			}
		}
	}
}

// TestDocText_AfterCompaction: the log's compaction moves every record;
// texts are read back from the new file at once, before any reopen, and
// a replaced doc's old terms leave the keyword index.
func TestDocText_AfterCompaction(t *testing.T) {
	ix := openTest(t, Options{})
	var docs []string
	for i := 0; i < 5000; i++ {
		id := fmt.Sprint("d", i)
		mustIndex(t, ix, Doc{ID: id, Text: fmt.Sprintf("alpha%d doc %d", i%7, i)})
		docs = append(docs, id)
	}
	gone, left := docs[:4500], docs[4500:]
	if err := ix.Remove(context.Background(), gone...); err != nil {
		t.Fatal(err)
	}
	if d := ix.st.log.Dead; d != 0 {
		t.Fatalf("log not compacted: %d dead records", d)
	}
	for _, id := range []string{left[0], left[277], left[len(left)-1]} {
		var i int
		fmt.Sscanf(id, "d%d", &i)
		want := fmt.Sprintf("alpha%d doc %d", i%7, i)
		if d, ok, err := ix.Get(id); err != nil || !ok || d.Text != want {
			t.Fatalf("Get(%s) after compaction: %+v %v %v, want %q", id, d, ok, err, want)
		}
	}
	res := search(t, ix, Query{Text: "alpha3", Limit: 1000})
	if len(res) == 0 {
		t.Fatal("nothing found after compaction")
	}
	for _, r := range res {
		if !strings.HasPrefix(r.Doc.Text, "alpha3 doc ") {
			t.Fatalf("search after compaction: %s has text %q", r.Doc.ID, r.Doc.Text)
		}
	}
	// a replacement reads the compacted record back to drop its terms
	mustIndex(t, ix, Doc{ID: res[0].Doc.ID, Text: "beta"})
	if again := search(t, ix, Query{Text: "alpha3", Limit: 1000}); len(again) != len(res)-1 || indexOf(again, res[0].Doc.ID) >= 0 {
		t.Fatalf("old terms of %s still indexed: %d results, was %d", res[0].Doc.ID, len(again), len(res))
	}
}

// TestDocText_DamagedRecord: a record damaged on disk after it was
// indexed is found when its text is read back: ErrNeedsRebuild, never
// another text or a panic.
func TestDocText_DamagedRecord(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, Options{Dir: dir})
	mustIndex(t, ix, memDocs()...)
	off := ix.st.docs["c"].off
	f, err := os.OpenFile(ix.st.meta.LogPath(dir), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("Mallory"), off+40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, err := ix.Get("c"); !errors.Is(err, ErrNeedsRebuild) {
		t.Fatalf("Get of a damaged record: %v, want ErrNeedsRebuild", err)
	}
	if _, err := ix.Search(context.Background(), Query{Text: "Alice prefers short answers in German"}); !errors.Is(err, ErrNeedsRebuild) {
		t.Fatalf("Search returning a damaged record: %v, want ErrNeedsRebuild", err)
	}
	if res := search(t, ix, Query{Text: "Rust error handling"}); len(res) == 0 || res[0].Doc.ID != "e" || res[0].Doc.Text != memDocs()[4].Text {
		t.Fatalf("an undamaged record: %+v", res)
	}
}

// BenchmarkSearch_TextReadBack: what reading texts back from the doc log
// costs a search (its results and feedback docs), against the same
// index with every text in RAM (no directory), in the same run.
//
//	go test ./search/ -run='^$' -bench=TextReadBack -benchtime=2000x -count=3
func BenchmarkSearch_TextReadBack(b *testing.B) {
	words := []string{"walrus", "harbour", "deploy", "friday", "launch", "otter", "port", "crane", "diary", "plans"}
	var docs []Doc
	for i := range 20_000 {
		docs = append(docs, Doc{ID: fmt.Sprint("d", i), Kind: 30078, D: fmt.Sprint("snow:memory:n", i),
			Tags: map[string][]string{"d": {fmt.Sprint("snow:memory:n", i)}, "t": {words[i%7]}},
			Text: fmt.Sprintf("%s %s note %d about the %s and what we said of it on the day", words[i%10], words[(i/10)%10], i, words[(i/100)%10])})
	}
	for _, dir := range []string{"ram", "disk"} {
		o := Options{}
		if dir == "disk" {
			o.Dir = b.TempDir()
		}
		ix, err := Open(o)
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Index(context.Background(), docs...); err != nil {
			b.Fatal(err)
		}
		b.Run(dir, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				q := words[i%10] + " " + words[(i+3)%10]
				if res, err := ix.Search(context.Background(), Query{Text: q, Limit: 10}); err != nil || len(res) != 10 {
					b.Fatal(len(res), err)
				}
			}
		})
		_ = ix.Close()
	}
}
