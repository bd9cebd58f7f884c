package search

import (
	"sort"
	"strconv"
)

// A thread is a stream of messages in one group (same kind, same h tag),
// in time order. Messages in a chat answer each other: "what did she
// research?" is often answered by the reply to the message that names the
// topic. Search uses the neighbours in a thread to let a hit lend part of
// its score to the messages around it.
type threadSet struct {
	byKey map[string][]threadEntry
}

type threadEntry struct {
	at int64
	id string
}

func less(a, b threadEntry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.id < b.id
}

func newThreadSet() *threadSet { return &threadSet{byKey: make(map[string][]threadEntry)} }

// threadKey is "" for docs that are not part of a message stream:
// addressable records (memories, profiles) stand alone.
func threadKey(d *Doc) string {
	if d.D != "" || d.Address != "" || d.Group == "" {
		return ""
	}
	return strconv.Itoa(d.Kind) + "/" + d.Group
}

func (t *threadSet) add(d *Doc) {
	k := threadKey(d)
	if k == "" {
		return
	}
	e := threadEntry{at: d.CreatedAt, id: d.ID}
	es := t.byKey[k]
	// Messages mostly arrive in order, so this is usually an append.
	i := sort.Search(len(es), func(i int) bool { return !less(es[i], e) })
	es = append(es, threadEntry{})
	copy(es[i+1:], es[i:])
	es[i] = e
	t.byKey[k] = es
}

func (t *threadSet) remove(d *Doc) {
	k := threadKey(d)
	if k == "" {
		return
	}
	es := t.byKey[k]
	e := threadEntry{at: d.CreatedAt, id: d.ID}
	i := sort.Search(len(es), func(i int) bool { return !less(es[i], e) })
	if i < len(es) && es[i] == e {
		es = append(es[:i], es[i+1:]...)
	}
	if len(es) == 0 {
		delete(t.byKey, k)
	} else {
		t.byKey[k] = es
	}
}

// neighbours calls fn for the docs up to w positions before and after d in
// its thread, with their signed distance (-1 = the message before, 1 = the
// reply after).
func (t *threadSet) neighbours(d *Doc, w int, fn func(id string, dist int)) {
	k := threadKey(d)
	if k == "" || w <= 0 {
		return
	}
	es := t.byKey[k]
	e := threadEntry{at: d.CreatedAt, id: d.ID}
	i := sort.Search(len(es), func(i int) bool { return !less(es[i], e) })
	if i >= len(es) || es[i] != e {
		return
	}
	for j := 1; j <= w; j++ {
		if i-j >= 0 {
			fn(es[i-j].id, -j)
		}
		if i+j < len(es) {
			fn(es[i+j].id, j)
		}
	}
}
