package search

import (
	"fmt"
	"slices"
	"testing"

	"github.com/snowclaw/snowclaw/search/session"
)

// turn is a memory that writes down what someone said, by author at at.
func turn(id, author string, at int64, text string) Doc {
	return Doc{ID: id, Kind: 30078, Pubkey: author, Source: author, CreatedAt: at, D: "snow:memory:" + id,
		Topic: id, Text: text, Scope: "public"}
}

// TestSearch_SpeakerTheQueryNames: of two memories that both hold the
// query's words, the one said by the person the query names ranks first,
// and the explain row gives the factor.
func TestSearch_SpeakerTheQueryNames(t *testing.T) {
	ix := openTest(t, Options{})
	mustIndex(t, ix,
		turn("to", "a", 100, "Caroline: Melanie, Melanie, your paintings of the lake, Melanie! I love the lake paintings"),
		turn("by", "a", 200, "Melanie: I paint the lake"),
	)
	res := search(t, ix, Query{Text: "What does Melanie paint at the lake?", Explain: true})
	if len(res) != 2 || res[0].Doc.ID != "by" || res[0].Explain.Speaker != 2 || res[1].Explain.Speaker != 1 {
		for _, r := range res {
			t.Logf("%s %+v", r.Doc.ID, *r.Explain)
		}
		t.Fatalf("got %v, want what Melanie said first, factor 2", ids(res))
	}
	// a query naming nobody leaves the order to the words
	for _, r := range search(t, ix, Query{Text: "paintings of the lake", Explain: true}) {
		if r.Explain.Speaker != 1 {
			t.Fatalf("no name, %s has speaker factor %v", r.Doc.ID, r.Explain.Speaker)
		}
	}
}

// TestSearch_SessionLendsToMates: a memory that answers without repeating
// the question's words is found through the memory written with it (same
// author, a minute later), and through nothing else: not another author's
// memory of that minute, not the author's memory of hours later, not a
// mate the reader may not read, not plain facts stored together.
func TestSearch_SessionLendsToMates(t *testing.T) {
	ix := openTest(t, Options{})
	secret := turn("secret", "a", 100, "Melanie: and this one stays between us")
	secret.Scope = "private"
	mustIndex(t, ix,
		turn("hit", "a", 100, "Melanie: I painted that lake sunrise last year"),
		turn("mate", "a", 160, "Melanie: By the way, take a look at this."),
		secret,
		turn("later", "a", 160+session.Window+1, "Melanie: take a look at my dog"),
		turn("other", "b", 100, "Melanie: take a look at this too"),
		Doc{ID: "fact1", Kind: 30078, Pubkey: "c", CreatedAt: 100, D: "snow:memory:f1", Text: "the lake sunrise was painted in oil", Scope: "public"},
		Doc{ID: "fact2", Kind: 30078, Pubkey: "c", CreatedAt: 100, D: "snow:memory:f2", Text: "the dog is called Bailey", Scope: "public"},
	)
	public := func(scope string) bool { return scope == "public" }
	res := search(t, ix, Query{Text: "when was the sunrise painted", Explain: true, Readable: public})
	got := ids(res)
	slices.Sort(got)
	if !slices.Equal(got, []string{"fact1", "hit", "mate"}) {
		t.Fatalf("got %v, want hit, its mate and the fact that matches", got)
	}
	if r := res[indexOf(res, "mate")]; r.Explain.Floor != FloorContext || r.Explain.BM25Rank == 0 {
		t.Fatalf("mate passed floor %q at bm25 rank %d, want context", r.Explain.Floor, r.Explain.BM25Rank)
	}
	// the agent reads every scope: the private mate comes too
	if res := search(t, ix, Query{Text: "when was the sunrise painted"}); indexOf(res, "secret") < 0 {
		t.Fatalf("a reader of every scope does not get the private mate: %v", ids(res))
	}
	// an unreadable mate lends nothing either
	if res := search(t, ix, Query{Text: "between us", Readable: public}); len(res) != 0 {
		t.Fatalf("an unreadable memory lent to its mates: %v", ids(res))
	}
	if res := search(t, ix, Query{Text: "zzzqqq"}); len(res) != 0 {
		t.Fatalf("unrelated query: %v", ids(res))
	}
	// once the hit is gone, its mate is found by nothing
	if err := ix.Remove(t.Context(), "hit"); err != nil {
		t.Fatal(err)
	}
	if res := search(t, ix, Query{Text: "when was the sunrise painted", Readable: public}); indexOf(res, "mate") >= 0 {
		t.Fatalf("a removed memory still lends: %v", ids(res))
	}
}

// TestSearch_HugeSessionLendsNothing: an author who stores thousands of
// memories in one burst (here one a second, each within the window of
// the last) gets no session context for them.
func TestSearch_HugeSessionLendsNothing(t *testing.T) {
	ix := openTest(t, Options{})
	docs := []Doc{turn("hit", "m", 1, "Mallory: the lake sunrise")}
	for i := range 500 { // more than session.MaxLend
		docs = append(docs, turn(fmt.Sprint("spam", i), "m", int64(2+i), fmt.Sprintf("Mallory: buy coin %d", i)))
	}
	mustIndex(t, ix, docs...)
	if res := search(t, ix, Query{Text: "lake sunrise"}); len(res) != 1 {
		t.Fatalf("got %d results, want the hit alone", len(res))
	}
}
