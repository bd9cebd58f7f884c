// Package thread keeps the messages of each chat thread (one kind in one
// group, keyed by the caller) in time order, for the neighbours a hit
// lends part of its score to, and their word counts, for the length prior
// of short messages.
package thread

import (
	"math"
	"sort"
)

// A thread is a stream of messages in one group (same kind, same h tag),
// in time order. Messages in a chat answer each other: "what did she
// research?" is often answered by the reply to the message that names the
// topic. Search uses the neighbours in a thread to let a hit lend part of
// its score to the messages around it.
type Set struct {
	byKey map[string][]entry
	// words is each message's word count and wordSum their total, for the
	// length prior (LengthFactor).
	words   map[string]int32
	wordSum int64
}

type entry struct {
	at int64
	id string
}

func less(a, b entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.id < b.id
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{byKey: make(map[string][]entry), words: make(map[string]int32)}
}

// Add puts message id, written at and of n words, in thread k ("": none).
func (t *Set) Add(k string, at int64, id string, n int32) {
	if k == "" {
		return
	}
	e := entry{at: at, id: id}
	es := t.byKey[k]
	// Messages mostly arrive in order, so this is usually an append.
	i := sort.Search(len(es), func(i int) bool { return !less(es[i], e) })
	es = append(es, entry{})
	copy(es[i+1:], es[i:])
	es[i] = e
	t.byKey[k] = es
	t.words[id] = n
	t.wordSum += int64(n)
}

// Remove takes message id (written at) out of thread k.
func (t *Set) Remove(k string, at int64, id string) {
	if k == "" {
		return
	}
	es := t.byKey[k]
	e := entry{at: at, id: id}
	i := sort.Search(len(es), func(i int) bool { return !less(es[i], e) })
	if i < len(es) && es[i] == e {
		es = append(es[:i], es[i+1:]...)
	}
	if n, ok := t.words[id]; ok {
		t.wordSum -= int64(n)
		delete(t.words, id)
	}
	if len(es) == 0 {
		delete(t.byKey, k)
	} else {
		t.byKey[k] = es
	}
}

// Neighbours calls fn for the messages up to w positions before and after
// message id (written at) in thread k, with their signed distance (-1 =
// the message before, 1 = the reply after).
func (t *Set) Neighbours(k string, at int64, id string, w int, fn func(id string, dist int)) {
	if k == "" || w <= 0 {
		return
	}
	es := t.byKey[k]
	e := entry{at: at, id: id}
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

// LengthFactor is the length prior for chat messages. In a conversation
// most short turns are reactions and greetings ("Wow, great!", "Thanks,
// Mel!"): they share a name or a word with a question yet rarely hold what
// it asks for, and the neighbour context (fuse.go) lends them the score of
// the statement next to them. So a message shorter than the mean message
// of the index is scaled by (words/mean)^alpha, the shorter the more;
// messages of mean length or more keep their score. Docs outside message
// streams (memories, profiles, file chunks) get 1: a short memory is
// usually a distilled fact, not small talk. The mean is over the messages
// the reader may read: count of them and their words summed (view).
func (t *Set) LengthFactor(id string, alpha float64, count int, words int64) float64 {
	if alpha <= 0 || count == 0 || words <= 0 {
		return 1
	}
	n, ok := t.words[id]
	if !ok {
		return 1
	}
	x := float64(max(n, 1)) * float64(count) / float64(words)
	if x >= 1 {
		return 1
	}
	return math.Pow(x, alpha)
}
