package search

import (
	"math"
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
	// words is each message's word count and wordSum their total, for the
	// length prior (lengthFactor).
	words   map[string]int32
	wordSum int64
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

func newThreadSet() *threadSet {
	return &threadSet{byKey: make(map[string][]threadEntry), words: make(map[string]int32)}
}

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
	n := d.words // state.keep counted them
	t.words[d.ID] = n
	t.wordSum += int64(n)
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
	if n, ok := t.words[d.ID]; ok {
		t.wordSum -= int64(n)
		delete(t.words, d.ID)
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

// lengthFactor is the length prior for chat messages. In a conversation
// most short turns are reactions and greetings ("Wow, great!", "Thanks,
// Mel!"): they share a name or a word with a question yet rarely hold what
// it asks for, and the neighbour context (fuse.go) lends them the score of
// the statement next to them. So a message shorter than the mean message
// of the index is scaled by (words/mean)^alpha, the shorter the more;
// messages of mean length or more keep their score. Docs outside message
// streams (memories, profiles, file chunks) get 1: a short memory is
// usually a distilled fact, not small talk. The mean is over the messages
// the reader may read: count of them and their words summed (view).
func (t *threadSet) lengthFactor(d *Doc, alpha float64, count int, words int64) float64 {
	if alpha <= 0 || count == 0 || words <= 0 {
		return 1
	}
	n, ok := t.words[d.ID]
	if !ok {
		return 1
	}
	x := float64(max(n, 1)) * float64(count) / float64(words)
	if x >= 1 {
		return 1
	}
	return math.Pow(x, alpha)
}
