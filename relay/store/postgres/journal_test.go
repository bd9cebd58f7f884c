package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw/internal/pgtest"
)

// A record appended on one instance reaches the other's list (and not the
// appender's own, which applied it already); a new instance loads them all.
func TestJournal_AppendOnOneReachesTheOther(t *testing.T) {
	u := pgtest.New(t)
	a, b := open(t, u), open(t, u)
	gotA, gotB := make(chan string, 16), make(chan string, 16)
	ja, jb := a.Journal("erased"), b.Journal("erased")
	if err := ja.Open(func(l []byte) error { gotA <- string(l); return nil }); err != nil {
		t.Fatal(err)
	}
	defer ja.Close()
	if err := jb.Open(func(l []byte) error { gotB <- string(l); return nil }); err != nil {
		t.Fatal(err)
	}
	defer jb.Close()
	other := a.Journal("audit")
	if err := other.Open(func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Append([]byte("in another journal")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := ja.Append([]byte(fmt.Sprintf("id %064d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		select {
		case l := <-gotB:
			if want := fmt.Sprintf("id %064d", i); l != want {
				t.Fatalf("B got %q, want %q", l, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("B never got record %d", i)
		}
	}
	// B appends; A gets it, and only it: its own three were not handed back
	if err := jb.Append([]byte("from b")); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-gotA:
		if l != "from b" {
			t.Fatalf("A got %q back, want only B's record", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("A never got B's record")
	}
	// a new instance loads the whole journal, in order, and nothing else
	c := open(t, u)
	var all []string
	jc := c.Journal("erased")
	if err := jc.Open(func(l []byte) error { all = append(all, string(l)); return nil }); err != nil {
		t.Fatal(err)
	}
	jc.Close()
	if len(all) != 4 || all[3] != "from b" {
		t.Fatalf("a new instance loaded %q", all)
	}
}
