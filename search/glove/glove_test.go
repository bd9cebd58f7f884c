package glove_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/snowclaw/snowclaw/internal/eval/locomo"
	"github.com/snowclaw/snowclaw/search/glove"
	"github.com/snowclaw/snowclaw/search/hashembed"
	"github.com/snowclaw/snowclaw/search/vector"
)

func TestTable_RoundTrip(t *testing.T) {
	es := []glove.Entry{
		{Word: "cat", Rank: 7, Vec: []float32{1, 0, -0.5}},
		{Word: "ant", Rank: 2, Vec: []float32{0, 2, 0}},
		{Word: "zebra", Rank: 40, Vec: []float32{-1, 1, 1}},
	}
	var b bytes.Buffer
	if err := glove.Write(&b, 3, 100, [][]float32{{1, 0, 0}}, es); err != nil {
		t.Fatal(err)
	}
	tb, err := glove.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 3 || tb.Dim() != 3 || tb.SourceWords() != 100 || len(tb.Components()) != 1 {
		t.Fatalf("header: %d words, dim %d, %d source, %d components", tb.Len(), tb.Dim(), tb.SourceWords(), len(tb.Components()))
	}
	for _, e := range es {
		i, rank, ok := tb.Lookup(e.Word)
		if !ok || rank != e.Rank {
			t.Fatalf("%s: ok %v rank %d", e.Word, ok, rank)
		}
		acc := make([]float64, 3)
		tb.AddTo(acc, i, 1)
		for j, x := range e.Vec {
			if math.Abs(acc[j]-float64(x)) > 0.01 {
				t.Errorf("%s[%d] = %v, want %v", e.Word, j, acc[j], x)
			}
		}
	}
	for _, w := range []string{"", "a", "bat", "zzz", "cats"} {
		if _, _, ok := tb.Lookup(w); ok {
			t.Errorf("%q found", w)
		}
	}
	// truncated or corrupt tables are refused, not read past their end
	for _, n := range []int{0, 10, 30, b.Len() - 1} {
		if _, err := glove.Parse(b.Bytes()[:n]); err == nil {
			t.Errorf("a table cut at %d bytes parsed", n)
		}
	}
}

func TestEmbedded_Table(t *testing.T) {
	tb, err := glove.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if tb.Len() != glove.TableWords || tb.Dim() != glove.Dim {
		t.Fatalf("embedded table: %d words of %d, want %d of %d", tb.Len(), tb.Dim(), glove.TableWords, glove.Dim)
	}
	for _, w := range []string{"car", "automobile", "wedding", "doctor", "painting"} {
		if _, _, ok := tb.Lookup(w); !ok {
			t.Errorf("%q is not in the table", w)
		}
	}
	for _, w := range []string{"the", "and", "of"} { // stop words are left out
		if _, _, ok := tb.Lookup(w); ok {
			t.Errorf("stop word %q is in the table", w)
		}
	}
}

func cos(t *testing.T, e *glove.Embedder, a, b string) float64 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs[0]) != e.Dim() {
		t.Fatalf("dimension %d, want %d", len(vs[0]), e.Dim())
	}
	return float64(vector.Dot(vs[0], vs[1]))
}

// The point of the embedder: texts that mean the same in different words
// are nearer each other than texts about something else.
func TestEmbed_ByMeaning(t *testing.T) {
	e := glove.New()
	for _, c := range []struct{ q, near, far string }{
		{"what automobile does she own", "Maria drives a red car", "Maria paints watercolours on weekends"},
		{"when is the wedding", "they marry in June", "the printer ran out of toner"},
		{"which physician treats him", "his doctor is Dr Patel at the clinic", "he bought new running shoes"},
		{"favourite beverage in the morning", "starts every day with a strong coffee", "the train to Leeds was cancelled"},
	} {
		near, far := cos(t, e, c.q, c.near), cos(t, e, c.q, c.far)
		if near <= far+0.1 {
			t.Errorf("%q: %q at %.2f, %q at %.2f", c.q, c.near, near, c.far, far)
		}
	}
}

func TestEmbed_UnitOrZero(t *testing.T) {
	e := glove.New()
	vs, err := e.Embed(context.Background(), []string{"a cat sat on the mat", "zzzqqq xyzzyq", "the of and", ""})
	if err != nil {
		t.Fatal(err)
	}
	if n := vector.Dot(vs[0], vs[0]); math.Abs(float64(n)-1) > 1e-5 {
		t.Errorf("norm² %v, want 1", n)
	}
	for i := 1; i < len(vs); i++ { // nothing known: nothing said
		if n := vector.Dot(vs[i], vs[i]); n != 0 {
			t.Errorf("text %d: norm² %v, want 0", i, n)
		}
	}
}

// Out-of-vocabulary words contribute nothing, so a typo or a name the
// table lacks leaves the vector of the rest unchanged.
func TestEmbed_UnknownWordsAddNothing(t *testing.T) {
	e := glove.New()
	if c := cos(t, e, "my sister adopted a kitten", "my sister adopted a kitten qwzxv Zorblatt"); c < 0.9999 {
		t.Errorf("unknown words moved the vector: cosine %v", c)
	}
}

func TestEmbed_Deterministic(t *testing.T) {
	e := glove.New()
	texts := make([]string, 3000) // enough to run on every core
	for i := range texts {
		texts[i] = []string{"a dog in the park", "stock prices fell", "my grandmother's recipe"}[i%3]
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i < len(vs); i++ {
		if !slicesEqual(vs[i], vs[i%3]) {
			t.Fatalf("text %d differs from text %d", i, i%3)
		}
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCoverage_LoCoMo measures the vocabulary cuts: the share of the
// LoCoMo turns' words (not stop words) each cut knows, by occurrence and
// by distinct word. It reads the table of the largest cut from
// SNOWCLAW_GLOVE_TABLE (gen -words 200000) and the conversations from
// SNOWCLAW_LOCOMO:
//
//	SNOWCLAW_GLOVE_TABLE=/tmp/t200k.bin SNOWCLAW_LOCOMO=/path/to/locomo.json go test -run Coverage -v ./search/glove/
func TestCoverage_LoCoMo(t *testing.T) {
	path, data := os.Getenv("SNOWCLAW_GLOVE_TABLE"), os.Getenv("SNOWCLAW_LOCOMO")
	if path == "" || data == "" {
		t.Skip("set SNOWCLAW_GLOVE_TABLE and SNOWCLAW_LOCOMO")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := glove.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	convs, err := locomo.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range convs {
		for _, tu := range c.Turns {
			for _, w := range hashembed.Words(tu.Text) {
				if !hashembed.IsStop(w) {
					count[w]++
				}
			}
		}
	}
	for _, cut := range []int{10000, 20000, 50000, 100000, 150000, 200000} {
		var occ, all, distinct int
		for w, n := range count {
			all += n
			if _, rank, ok := tb.Lookup(w); ok && rank < cut {
				occ += n
				distinct++
			}
		}
		t.Logf("cut at source rank %6d: %.2f%% of %d words, %.2f%% of %d distinct", cut, 100*float64(occ)/float64(all), all, 100*float64(distinct)/float64(len(count)), len(count))
	}
}

// BenchmarkEmbed embeds LoCoMo-sized turns, one call of 1,000 as a
// rebuild's batch does (go test -bench Embed ./search/glove/).
func BenchmarkEmbed(b *testing.B) {
	e := glove.New()
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = fmt.Sprintf("Melanie: I painted a sunrise over the lake last weekend, number %d, and my kids loved it!", i)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}

func TestNewWith_VariantsAreNamed(t *testing.T) {
	d, err := glove.NewWith(glove.Options{})
	if err != nil || d.Name() != glove.Name {
		t.Fatalf("default: %v %v", d, err)
	}
	v, err := glove.NewWith(glove.Options{Components: 3})
	if err != nil || v.Name() == glove.Name {
		t.Fatalf("a variant is recorded as the default: %s %v", v.Name(), err)
	}
	if _, err := glove.NewWith(glove.Options{Components: 4}); err == nil {
		t.Fatal("more components than the table has")
	}
}
