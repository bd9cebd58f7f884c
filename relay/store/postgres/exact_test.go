package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// Every filter is answered exactly: a tag value under another name, a
// value the wanted one is a prefix of, or a tag that is not the filter's
// does not match; ids and authors combine as AND.
func TestQuery_Exact(t *testing.T) {
	s := open(t, "")
	a, b := newKey(), newKey()
	save(t, s, ev(a, 9, 100, nostr.Tags{{"h", "x"}}, "group x"))
	save(t, s, ev(a, 9, 101, nostr.Tags{{"p", "x"}}, "p x"))
	save(t, s, ev(a, 9, 102, nostr.Tags{{"h", "xy"}}, "group xy"))
	save(t, s, ev(b, 30078, 103, nostr.Tags{{"d", "hid"}}, "d hid"))
	save(t, s, ev(b, 30078, 104, nostr.Tags{{"d", "hidopen"}}, "d hidopen"))
	save(t, s, ev(b, 1, 105, nostr.Tags{{"hx", "x"}}, "long name hx"))
	save(t, s, ev(b, 1, 106, nostr.Tags{{"h"}}, "h without value"))
	save(t, s, ev(b, 1, 107, nostr.Tags{{"t", "a", "h:x"}}, "t a, then h:x as a third element"))
	idA := query(t, s, nostr.Filter{Tags: nostr.TagMap{"h": {"x"}}})[0].ID
	ts := func(v nostr.Timestamp) *nostr.Timestamp { return &v }
	for _, c := range []struct {
		name string
		f    nostr.Filter
		want []string
	}{
		{"h x is not p x", nostr.Filter{Tags: nostr.TagMap{"h": {"x"}}}, []string{"group x"}},
		{"p x is not h x", nostr.Filter{Tags: nostr.TagMap{"p": {"x"}}}, []string{"p x"}},
		{"h prefix", nostr.Filter{Tags: nostr.TagMap{"h": {"xy"}}}, []string{"group xy"}},
		{"d is no prefix", nostr.Filter{Tags: nostr.TagMap{"d": {"hid"}}}, []string{"d hid"}},
		{"d address limit 1", nostr.Filter{Kinds: []int{30078}, Authors: []string{b}, Tags: nostr.TagMap{"d": {"hid"}}, Limit: 1}, []string{"d hid"}},
		{"two tag names AND", nostr.Filter{Tags: nostr.TagMap{"h": {"x", "xy"}, "p": {"x"}}}, nil},
		{"long tag name", nostr.Filter{Tags: nostr.TagMap{"hx": {"x"}}}, []string{"long name hx"}},
		{"t a", nostr.Filter{Tags: nostr.TagMap{"t": {"a"}}}, []string{"t a, then h:x as a third element"}},
		{"colon inside the value", nostr.Filter{Tags: nostr.TagMap{"t": {"a:h:x"}}}, nil},
		{"id and author agree", nostr.Filter{IDs: []string{idA}, Authors: []string{a}}, []string{"group x"}},
		{"id and author disagree", nostr.Filter{IDs: []string{idA}, Authors: []string{b}}, nil},
		{"kinds and since", nostr.Filter{Kinds: []int{9}, Since: ts(101)}, []string{"group xy", "p x"}},
		{"until", nostr.Filter{Until: ts(100)}, []string{"group x"}},
		{"empty kinds match nothing", nostr.Filter{Kinds: []int{}}, nil},
		{"empty ids match nothing", nostr.Filter{IDs: []string{}}, nil},
		{"limit", nostr.Filter{Authors: []string{b}, Limit: 2}, []string{"t a, then h:x as a third element", "h without value"}},
		{"search is not the store's", nostr.Filter{Search: "group"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := contents(query(t, s, c.f))
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if c.f.Limit == 0 && c.f.Search == "" {
				n, err := s.CountEvents(context.Background(), c.f)
				if err != nil || n != int64(len(c.want)) {
					t.Fatalf("count %d (err %v), want %d", n, err, len(c.want))
				}
			}
		})
	}
}

// Tag values and contents that are SQL are stored and matched verbatim:
// no value of a filter or an event is ever part of the SQL text.
func TestQuery_InjectionIsData(t *testing.T) {
	s := open(t, "")
	pk := newKey()
	evil := []string{
		`x'; DROP TABLE events; --`,
		`x') OR true --`,
		`' OR '1'='1`,
		`$1`, `%`, `_`, `\`, `"}]`, `h:x`, `{"a":1}`, `x' UNION SELECT id FROM events --`,
	}
	for i, v := range evil {
		save(t, s, ev(pk, 1, nostr.Timestamp(100+i), nostr.Tags{{"t", v}, {"x-" + v, v}}, v))
	}
	save(t, s, ev(pk, 1, 50, nostr.Tags{{"t", "innocent"}}, "innocent"))
	for _, v := range evil {
		got := contents(query(t, s, nostr.Filter{Tags: nostr.TagMap{"t": {v}}}))
		if !slices.Equal(got, []string{v}) {
			t.Errorf("#t %q: got %q, want exactly the event holding it", v, got)
		}
		got = contents(query(t, s, nostr.Filter{Tags: nostr.TagMap{"x-" + v: {v}}}))
		if !slices.Equal(got, []string{v}) {
			t.Errorf("tag named %q: got %q, want exactly the event holding it", "x-"+v, got)
		}
		if got := query(t, s, nostr.Filter{IDs: []string{v}, Authors: []string{v}}); len(got) != 0 {
			t.Errorf("ids/authors %q matched %d events", v, len(got))
		}
	}
	if n, err := s.CountEvents(context.Background(), nostr.Filter{}); err != nil || n != int64(len(evil)+1) {
		t.Fatalf("after the attempts the store holds %d events (err %v), want %d", n, err, len(evil)+1)
	}
}

// Huge filters are refused with a clear error, not sent as a giant query;
// text PostgreSQL cannot hold is refused, not altered; a stored id is a
// duplicate.
func TestWrite_Refusals(t *testing.T) {
	ctx := context.Background()
	s := open(t, "")
	pk := newKey()
	many := make([]string, postgres.MaxFilterValues+1)
	for i := range many {
		many[i] = strings.Repeat("a", 64)
	}
	if _, err := s.QueryEvents(ctx, nostr.Filter{Authors: many}); !errors.Is(err, postgres.ErrFilterTooLarge) || !strings.HasPrefix(err.Error(), "invalid: ") {
		t.Errorf("huge filter: err %v, want ErrFilterTooLarge starting with invalid:", err)
	}
	if _, err := s.CountEvents(ctx, nostr.Filter{Tags: nostr.TagMap{"e": many}}); !errors.Is(err, postgres.ErrFilterTooLarge) {
		t.Errorf("huge count: err %v, want ErrFilterTooLarge", err)
	}
	for name, e := range map[string]*nostr.Event{
		"NUL content":     ev(pk, 1, 1, nil, "a\x00b"),
		"NUL tag":         ev(pk, 1, 1, nostr.Tags{{"t", "a\x00"}}, "x"),
		"invalid UTF-8":   ev(pk, 1, 1, nil, "\xff\xfe"),
		"replaceable NUL": ev(pk, 0, 1, nil, "\x00"),
	} {
		err := s.SaveEvent(ctx, e)
		if name == "replaceable NUL" {
			err = s.ReplaceEvent(ctx, e)
		}
		if !errors.Is(err, postgres.ErrUnstorable) {
			t.Errorf("%s: err %v, want ErrUnstorable", name, err)
		}
	}
	e := save(t, s, ev(pk, 1, 1, nil, "once"))
	if err := s.SaveEvent(ctx, e); !errors.Is(err, eventstore.ErrDupEvent) {
		t.Errorf("saving a stored id: err %v, want ErrDupEvent", err)
	}
	if n, _ := s.CountEvents(ctx, nostr.Filter{}); n != 1 {
		t.Errorf("store holds %d events, want the one", n)
	}
}

// A version lookup (store.Versions) reads the address column, and finds
// what the generic filter finds: the first d tag is the address, a
// second one is not, a missing one counts as "", and a replaceable kind
// ignores d.
func TestVersions_AtAddressAgreesWithTheFilter(t *testing.T) {
	ctx := context.Background()
	s := open(t, "")
	a := newKey()
	stored := []*nostr.Event{
		save(t, s, ev(a, 30078, 100, nostr.Tags{{"d", "x"}, {"d", "y"}}, "first d x, second d y")),
		save(t, s, ev(a, 30078, 101, nil, "no d")),
		save(t, s, ev(a, 10002, 102, nostr.Tags{{"d", "x"}}, "replaceable with a d")),
	}
	generic := struct{ eventstore.Store }{s} // hides AtAddress
	for _, probe := range []*nostr.Event{
		ev(a, 30078, 200, nostr.Tags{{"d", "x"}}, ""),
		ev(a, 30078, 200, nostr.Tags{{"d", "y"}}, ""),
		ev(a, 30078, 200, nil, ""),
		ev(a, 30078, 200, nostr.Tags{{"d", ""}}, ""),
		ev(a, 10002, 200, nil, ""),
		ev(a, 10002, 200, nostr.Tags{{"d", "other"}}, ""),
		ev(newKey(), 30078, 200, nostr.Tags{{"d", "x"}}, ""),
		ev(a, 1, 200, nil, "a regular kind has no address"),
	} {
		fast, err := store.Versions(ctx, s, probe)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := store.Versions(ctx, generic, probe)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := contents(fast), contents(slow); !slices.Equal(got, want) {
			t.Errorf("kind %d tags %v: the address lookup found %q, the filter %q", probe.Kind, probe.Tags, got, want)
		}
	}
	if got := contents(must(store.Versions(ctx, s, ev(a, 30078, 200, nostr.Tags{{"d", "x"}}, "")))); !slices.Equal(got, []string{stored[0].Content}) {
		t.Errorf("d x: %q", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
