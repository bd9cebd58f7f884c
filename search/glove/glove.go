// Package glove is the built-in semantic embedder: a text's vector is the
// SIF-weighted average of pretrained GloVe word vectors (Pennington,
// Socher and Manning 2014; GloVe 6B, 100 dimensions, public domain: see
// LICENCE.md) with the common components removed (Arora, Liang and Ma
// 2017), unit length. It needs no model server and no network: the words
// are in vectors.bin, embedded in the binary and read where they lie.
//
// It knows English words as a 2014 Wikipedia and newswire knew them:
// "automobile" is near "car", "wedding" near "marriage". It does not know
// names it did not see, numbers as quantities, typos, or any other
// language: a word outside its table contributes nothing, and BM25 keeps
// matching those. Words are cut as the index cuts them (search/hashembed.
// Words) and its stop words are left out.
package glove

import (
	"context"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/snowclaw/snowclaw/internal/par"
	"github.com/snowclaw/snowclaw/search/hashembed"
	"github.com/snowclaw/snowclaw/search/vector"
)

// Name is recorded with indexes built by this embedder; bump the version
// whenever its output changes (the table, the weights, the components
// removed), so old indexes are rebuilt instead of compared against
// incompatible vectors.
const Name = "builtin-glove-v1"

// Dim is the vectors' dimension.
const Dim = 100

// TableWords is the vocabulary cut of vectors.bin (docs/search-tuning.md).
const TableWords = 100000

// DefaultA is SIF's a: a word of probability a weighs one half.
const DefaultA = 1e-3

// DefaultComponents is how many common components are removed.
const DefaultComponents = 2

//go:embed vectors.bin
var tableBytes []byte

var embedded = sync.OnceValues(func() (*Table, error) { return Parse(tableBytes) })

// Embedded is the table in the binary.
func Embedded() (*Table, error) { return embedded() }

// Options vary the embedder for measurements; the zero value is the
// built-in embedder.
type Options struct {
	Table      *Table  // nil: the embedded table
	A          float64 // SIF's a; 0: DefaultA
	Components int     // common components removed; 0: DefaultComponents, < 0: none
	// MaxRank leaves out words of that source rank or rarer (a smaller
	// vocabulary cut); 0 keeps the whole table.
	MaxRank int
	// Name is recorded with the index; "" names a variant by its
	// options, so its vectors are never taken for the default's.
	Name string
}

// Embedder is the embedder (search.Embedder).
type Embedder struct {
	t    *Table
	o    Options
	pcs  [][]float32
	name string
	dim  int
}

// New is the built-in embedder over the embedded table. The table is
// checked by this package's tests, so a broken one is a broken build.
func New() *Embedder {
	e, err := NewWith(Options{})
	if err != nil {
		panic(err)
	}
	return e
}

// NewWith is an embedder with o.
func NewWith(o Options) (*Embedder, error) {
	variant := o != Options{}
	t := o.Table
	if t == nil {
		var err error
		if t, err = Embedded(); err != nil {
			return nil, err
		}
	}
	if o.A <= 0 {
		o.A = DefaultA
	}
	if o.Components == 0 {
		o.Components = DefaultComponents
	}
	e := &Embedder{t: t, o: o, name: Name, dim: t.Dim()}
	if o.Components > 0 {
		if o.Components > len(t.Components()) {
			return nil, fmt.Errorf("glove: %d components asked, the table has %d", o.Components, len(t.Components()))
		}
		e.pcs = t.Components()[:o.Components]
	}
	switch {
	case o.Name != "":
		e.name = o.Name
	case variant: // never recorded as the built-in embedder's vectors
		e.name = fmt.Sprintf("%s-variant-a%g-pc%d-rank%d-table%v", Name, o.A, o.Components, o.MaxRank, o.Table != nil)
	}
	return e, nil
}

func (e *Embedder) Name() string { return e.name }
func (e *Embedder) Dim() int     { return e.dim }

// Embed embeds texts on every core when there are enough of them: each
// text's vector depends on that text alone.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	err := par.Ranges(len(texts), func(lo, hi int) error {
		acc := make([]float64, e.t.Dim())
		for i := lo; i < hi; i++ {
			if (i-lo)%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			out[i] = e.embed(texts[i], acc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// embed is one text's semantic part: the SIF-weighted sum of its known
// words' vectors, the common components taken off, unit length (zero
// when it has no known word). acc is scratch.
func (e *Embedder) embed(text string, acc []float64) []float32 {
	clear(acc)
	n := e.t.SourceWords()
	for _, w := range hashembed.Words(text) {
		if hashembed.IsStop(w) {
			continue
		}
		entry, rank, ok := e.t.Lookup(w)
		if !ok || e.o.MaxRank > 0 && rank >= e.o.MaxRank {
			continue
		}
		e.t.AddTo(acc, entry, SIFWeight(e.o.A, rank, n))
	}
	for _, pc := range e.pcs {
		var d float64
		for j, x := range pc {
			d += acc[j] * float64(x)
		}
		for j, x := range pc {
			acc[j] -= d * float64(x)
		}
	}
	v := make([]float32, len(acc))
	for j, x := range acc {
		v[j] = float32(x)
	}
	vector.Normalize(v)
	return v
}

// Null queries are made of words drawn from the table's ranks nullLo to
// nullHi (a query's words: neither the commonest nor the rarest).
const nullLo, nullHi, nullWords = 100, 50000, 3

// NullQueries are n queries about nothing in particular: three words
// each, drawn at random (the same n queries every time) from the
// vocabulary. The index calibrates its vector floor on how near such
// queries come to the docs it holds (search.NullQuerier).
func (e *Embedder) NullQueries(n int) []string {
	r := rand.New(rand.NewPCG(0x6e756c6c, 0x71756572))
	out := make([]string, 0, n)
	ws := make([]string, 0, nullWords)
	for len(out) < n {
		w, rank := e.t.At(r.IntN(e.t.Len()))
		if rank < nullLo || rank >= nullHi || e.o.MaxRank > 0 && rank >= e.o.MaxRank {
			continue
		}
		ws = append(ws, w)
		if len(ws) == nullWords {
			out = append(out, strings.Join(ws, " "))
			ws = ws[:0]
		}
	}
	return out
}
