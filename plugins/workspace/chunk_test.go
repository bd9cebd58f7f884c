package workspace

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestFiles_Chunking(t *testing.T) {
	seq := func(prefix string, n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("%s%d", prefix, i+1)
		}
		return strings.Join(ws, " ")
	}
	cases := []struct {
		name     string
		text     string
		max, ovl int
		want     []string // nil: only the generic checks
		count    int      // when want is nil and count > 0
	}{
		{name: "empty", text: "", max: 10, ovl: 3, want: []string{}},
		{name: "blank", text: " \n\n\t ", max: 10, ovl: 3, want: []string{}},
		{name: "short text is one chunk, trimmed", text: "\n  one two three\n", max: 10, ovl: 3,
			want: []string{"one two three"}},
		{name: "exactly max words", text: seq("w", 10), max: 10, ovl: 3, want: []string{seq("w", 10)}},
		{name: "cut at the paragraph, no overlap",
			text: "Alpha one two three four five.\n\nBeta one two three four five.", max: 10, ovl: 0,
			want: []string{"Alpha one two three four five.", "Beta one two three four five."}},
		{name: "paragraph beats a later sentence end",
			text: "p1 p2 p3 p4 p5 p6\n\nq1 q2. q3 q4 q5 q6", max: 10, ovl: 0,
			want: []string{"p1 p2 p3 p4 p5 p6", "q1 q2. q3 q4 q5 q6"}},
		{name: "line beats sentence end",
			text: "l1 l2 l3 l4 l5 l6\nm1. m2 m3 m4 m5 m6", max: 10, ovl: 0,
			want: []string{"l1 l2 l3 l4 l5 l6", "m1. m2 m3 m4 m5 m6"}},
		{name: "markdown heading is a paragraph",
			text: "h1 h2 h3 h4 h5\nh6 h7\n# Title t2 t3 t4", max: 10, ovl: 0,
			want: []string{"h1 h2 h3 h4 h5\nh6 h7", "# Title t2 t3 t4"}},
		{name: "sentence end when there is no line",
			text: "s1 s2 s3 s4 s5 s6. s7 s8 s9 s10 s11 s12", max: 10, ovl: 0,
			want: []string{"s1 s2 s3 s4 s5 s6.", "s7 s8 s9 s10 s11 s12"}},
		{name: "no boundary: hard cuts sharing overlap words",
			text: seq("w", 25), max: 10, ovl: 3,
			want: []string{
				"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10",
				"w8 w9 w10 w11 w12 w13 w14 w15 w16 w17",
				"w15 w16 w17 w18 w19 w20 w21 w22 w23 w24",
				"w22 w23 w24 w25",
			}},
		{name: "overlap starts at a sentence start",
			text: "a1 a2 a3 a4 a5. a6 a7 a8\n\nb1 b2 b3 b4 b5 b6 b7 b8", max: 12, ovl: 5,
			want: []string{"a1 a2 a3 a4 a5. a6 a7 a8", "a6 a7 a8\n\nb1 b2 b3 b4 b5 b6 b7 b8"}},
		{name: "a cut never falls in the first half of the window",
			text: "x1 x2\n\n" + seq("y", 20), max: 10, ovl: 0,
			want: []string{"x1 x2\n\ny1 y2 y3 y4 y5 y6 y7 y8", "y9 y10 y11 y12 y13 y14 y15 y16 y17 y18", "y19 y20"}},
		{name: "overlap larger than half the window is clamped",
			text: seq("z", 30), max: 10, ovl: 9, count: 5},
		{name: "default size: 1000 words in 40-word paragraphs",
			text: strings.Repeat(seq("para", 39)+" end.\n\n", 25), max: chunkWords, ovl: overlapWords, count: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := chunkText(c.text, c.max, c.ovl)
			if c.want != nil {
				if len(got) == 0 && len(c.want) == 0 {
					return
				}
				if !slices.Equal(got, c.want) {
					t.Fatalf("chunks:\n%q\nwant:\n%q", got, c.want)
				}
			} else if c.count > 0 && len(got) != c.count {
				t.Fatalf("%d chunks, want %d: %q", len(got), c.count, got)
			}
			checkChunks(t, c.text, got, c.max, min(c.ovl, max(c.max/2, 1)-1))
		})
	}
}

// checkChunks: every chunk is a verbatim slice of the text with at most max
// words; consecutive chunks share between 1 and ovl words (none when ovl
// is 0), and together they give back every word in order.
func checkChunks(t *testing.T, text string, chunks []string, maxWords, ovl int) {
	t.Helper()
	var all []string
	for i, c := range chunks {
		if !strings.Contains(text, c) {
			t.Fatalf("chunk %d is not a slice of the text: %q", i, c)
		}
		ws := strings.Fields(c)
		if len(ws) == 0 || len(ws) > maxWords {
			t.Fatalf("chunk %d has %d words, max %d", i, len(ws), maxWords)
		}
		if i == 0 {
			all = ws
			continue
		}
		k := 0
		for j := min(ovl, len(ws), len(all)); j > 0; j-- {
			if slices.Equal(all[len(all)-j:], ws[:j]) {
				k = j
				break
			}
		}
		if ovl > 0 && k == 0 {
			t.Fatalf("chunk %d shares no words with the one before: %q", i, c)
		}
		all = append(all, ws[k:]...)
	}
	if want := strings.Fields(text); !slices.Equal(all, want) && !(len(all) == 0 && len(want) == 0) {
		t.Fatalf("chunks give back %d words, want %d", len(all), len(want))
	}
}
