package keyword

import (
	"math"
	"slices"
)

// Postings is the inverted index of one partition: for each term the
// slots holding it, in slot order, so that Search can walk several lists
// side by side and skip ahead in the ones that cannot change the top k.
// Slots are numbered by Add; a removed slot is reused by a later Add.
type Postings struct {
	post map[string]*termList // len(post) is the vocabulary
	flen []float64            // slot → field length as BM25 sees it (fieldLength)
	free []uint32
	docs int
}

// termList is one term's postings and what bounds its BM25 score in this
// partition: no doc holding it has more occurrences than maxTF nor is
// shorter than minLen. Removing a doc does not tighten them: a bound only
// has to stay above every score.
type termList struct {
	p      []posting
	maxTF  uint32
	minLen float64
}

type posting struct{ slot, tf uint32 }

// NewPostings returns an empty partition.
func NewPostings() *Postings { return &Postings{post: make(map[string]*termList)} }

// Docs is the number of docs in the partition.
func (p *Postings) Docs() int { return p.docs }

// Slots is the number of slots, free ones included.
func (p *Postings) Slots() int { return len(p.flen) }

// Vocabulary is the number of distinct terms.
func (p *Postings) Vocabulary() int { return len(p.post) }

// DF is the number of docs holding term.
func (p *Postings) DF(term string) int {
	if l := p.post[term]; l != nil {
		return len(l.p)
	}
	return 0
}

// Add indexes a doc's analysis and returns its slot.
func (p *Postings) Add(a Analysed) uint32 {
	var slot uint32
	fl := fieldLength(a.Length)
	if n := len(p.free); n > 0 {
		slot = p.free[n-1]
		p.free = p.free[:n-1]
		p.flen[slot] = fl
	} else {
		slot = uint32(len(p.flen))
		p.flen = append(p.flen, fl)
	}
	for _, t := range a.Terms {
		l := p.post[t.Term]
		if l == nil {
			l = &termList{minLen: fl}
			p.post[t.Term] = l
		}
		e := posting{slot: slot, tf: t.N}
		if n := len(l.p); n == 0 || l.p[n-1].slot < slot {
			l.p = append(l.p, e)
		} else { // a reused slot: keep the list in slot order
			i, _ := slices.BinarySearchFunc(l.p, slot, cmpSlot)
			l.p = slices.Insert(l.p, i, e)
		}
		l.maxTF = max(l.maxTF, t.N)
		l.minLen = min(l.minLen, fl)
	}
	p.docs++
	return slot
}

// Remove takes the doc in slot out; a must be the analysis it was added
// with.
func (p *Postings) Remove(slot uint32, a Analysed) {
	for _, t := range a.Terms {
		l := p.post[t.Term]
		if l == nil {
			continue
		}
		if i, ok := slices.BinarySearchFunc(l.p, slot, cmpSlot); ok {
			l.p = slices.Delete(l.p, i, i+1)
		}
		if len(l.p) == 0 {
			delete(p.post, t.Term)
		}
	}
	p.flen[slot] = 0
	p.free = append(p.free, slot)
	p.docs--
}

func cmpSlot(e posting, slot uint32) int {
	switch {
	case e.slot < slot:
		return -1
	case e.slot > slot:
		return 1
	}
	return 0
}

// fieldLength is a doc's length as bleve's BM25 saw it (the ranking was
// tuned on bleve): stored as a float32 norm 1/√len and read back.
func fieldLength(n int32) float64 {
	if n <= 0 {
		return 0
	}
	norm := float64(float32(1 / math.Sqrt(float64(n))))
	return 1 / (norm * norm)
}
