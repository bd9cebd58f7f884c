package locomo

import (
	"context"
	"crypto/sha256"
	"math"
	"strings"

	"github.com/snowclaw/snowclaw/search"
	"github.com/snowclaw/snowclaw/search/vector"
)

// riEmbedder is an experiment: random indexing learnt from the
// turns themselves, blended with the built-in embedder. Each word gets a
// fixed sparse random vector (8 signed entries of 512, from its hash); a
// word's context vector sums the random vectors of the words it shares a
// turn with, weighted by their idf; a text is the idf-weighted sum of its
// words' context vectors, so two turns about the same thing in different
// words come out alike. It is trained once on every turn before indexing,
// which a relay could not do: see docs/search-tuning.md for what it
// gained and what keeping it would take.
type riEmbedder struct {
	base  search.Embedder
	ctxv  map[string][]float32
	idf   map[string]float64
	alpha float64 // share of the built-in embedder in the blend
}

const riDim = 512

func riWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if len(w) >= 3 {
			out = append(out, w)
		}
	}
	return out
}

func riIndex(w string) map[int]float32 {
	m := map[int]float32{}
	h := sha256.Sum256([]byte(w))
	for i := range 8 {
		pos := (int(h[2*i])<<8 | int(h[2*i+1])) % riDim
		if h[16+i]&1 == 0 {
			m[pos]++
		} else {
			m[pos]--
		}
	}
	return m
}

func newRIEmbedder(convs []Conversation, alpha float64) *riEmbedder {
	df := map[string]int{}
	var docs [][]string
	for _, c := range convs {
		for _, t := range c.Turns {
			seen := map[string]bool{}
			var ws []string
			for _, w := range riWords(t.Speaker + ": " + t.Text) {
				if !seen[w] {
					seen[w] = true
					ws = append(ws, w)
					df[w]++
				}
			}
			docs = append(docs, ws)
		}
	}
	n := float64(len(docs))
	e := &riEmbedder{base: search.NewBuiltinEmbedder(), ctxv: map[string][]float32{}, idf: map[string]float64{}, alpha: alpha}
	idx := map[string]map[int]float32{}
	for w, c := range df {
		e.idf[w] = math.Log(1 + n/float64(c))
		idx[w] = riIndex(w)
	}
	for _, ws := range docs {
		for _, w := range ws {
			v := e.ctxv[w]
			if v == nil {
				v = make([]float32, riDim)
				e.ctxv[w] = v
			}
			for _, u := range ws {
				if u != w {
					for p, x := range idx[u] {
						v[p] += float32(e.idf[u]) * x
					}
				}
			}
		}
	}
	for _, v := range e.ctxv {
		vector.Normalize(v)
	}
	return e
}

func (e *riEmbedder) Name() string { return "ri-experiment" }
func (e *riEmbedder) Dim() int     { return riDim }

func (e *riEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := e.base.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, t := range texts {
		ri := make([]float32, riDim)
		for _, w := range riWords(t) {
			if c := e.ctxv[w]; c != nil {
				for j, x := range c {
					ri[j] += float32(e.idf[w]) * x
				}
			}
		}
		vector.Normalize(ri)
		vector.Normalize(out[i])
		for j := range ri {
			out[i][j] = float32(e.alpha)*out[i][j] + float32(1-e.alpha)*ri[j]
		}
		vector.Normalize(out[i])
	}
	return out, nil
}
