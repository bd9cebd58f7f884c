package benchcorpus

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
)

// Query styles, in the order Queries cycles through them.
const (
	// StyleKeywords: the three attribute words, e.g. "aurora billing postgres".
	StyleKeywords = "keywords"
	// StyleQuestion: the three words in a natural question, with stop words
	// and, for some forms, a possessive ("what happened with aurora's …").
	StyleQuestion = "question"
	// StyleVariant: keywords with the component in another inflection that
	// shares its Porter stem ("invoicing" for "invoices").
	StyleVariant = "variant"
	// StyleTypo: keywords with two adjacent inner letters of one word
	// swapped ("auorra").
	StyleTypo = "typo"
)

// Styles lists every query style.
var Styles = []string{StyleKeywords, StyleQuestion, StyleVariant, StyleTypo}

// Query is a search with its known relevant memories.
type Query struct {
	Text   string
	Style  string
	Target int      // index of the memory the query was made from
	Keys   []string // the facts the query asks about (project, component, tech or person)
	Gold   []int    // ascending indexes of every memory stating all Keys; holds Target
}

// Queries returns n queries over mems, cycling through Styles; each picks a
// target memory at random and asks for its project, its component and one
// of its technologies or people.
func Queries(mems []Memory, seed int64, n int) []Query {
	if len(mems) == 0 {
		return nil
	}
	r := rand.New(rand.NewSource(seed))
	out := make([]Query, 0, n)
	for i := 0; i < n; i++ {
		style := Styles[i%len(Styles)]
		t := r.Intn(len(mems))
		m := mems[t]
		proj, comp := m.Key("project"), m.Key("component")
		var third []string
		for _, k := range m.Keys {
			if strings.HasPrefix(k, "person:") || strings.HasPrefix(k, "tech:") {
				third = append(third, k)
			}
		}
		k3 := third[r.Intn(len(third))]
		kind, w3, _ := strings.Cut(k3, ":")
		q := Query{Style: style, Target: t, Keys: []string{"component:" + comp, "project:" + proj, k3}}
		sort.Strings(q.Keys)

		words := []string{proj, comp, w3}
		switch style {
		case StyleQuestion:
			var forms []string
			for _, f := range questionForms {
				if !f.person || kind == "person" {
					forms = append(forms, f.format)
				}
			}
			if kind == "person" {
				w3 = title(w3)
			}
			q.Text = fmt.Sprintf(forms[r.Intn(len(forms))], title(proj), comp, w3)
		case StyleVariant:
			words[1] = variantOf(comp)
			q.Text = shuffled(r, words)
		case StyleTypo:
			// the project word if it is long enough, else the component
			if tw, ok := typo(r, proj); ok {
				words[0] = tw
			} else if tw, ok := typo(r, comp); ok {
				words[1] = tw
			}
			q.Text = shuffled(r, words)
		default:
			q.Text = shuffled(r, words)
		}
		q.Gold = gold(mems, q.Keys)
		out = append(out, q)
	}
	return out
}

// gold returns the indexes of every memory whose keys include all of want.
func gold(mems []Memory, want []string) []int {
	var out []int
	for i, m := range mems {
		if containsAll(m.Keys, want) {
			out = append(out, i)
		}
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		j := sort.SearchStrings(have, w)
		if j == len(have) || have[j] != w {
			return false
		}
	}
	return true
}

func variantOf(comp string) string {
	for _, c := range components {
		if c[0] == comp {
			return c[1]
		}
	}
	return comp
}

// typo swaps two different adjacent letters, keeping the first and the
// last letter; false when the word is too short for that.
func typo(r *rand.Rand, w string) (string, bool) {
	var at []int
	for j := 1; j+2 < len(w); j++ {
		if w[j] != w[j+1] {
			at = append(at, j)
		}
	}
	if len(at) == 0 {
		return w, false
	}
	j := at[r.Intn(len(at))]
	b := []byte(w)
	b[j], b[j+1] = b[j+1], b[j]
	return string(b), true
}

func shuffled(r *rand.Rand, words []string) string {
	ws := append([]string(nil), words...)
	r.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
	return strings.Join(ws, " ")
}

// Recall is |Gold ∩ got[:k]| / min(|Gold|, k): 1 when the top k hold as
// many relevant memories as they can. got holds memory indexes in rank
// order; repeats count once.
func (q Query) Recall(got []int, k int) float64 {
	if len(q.Gold) == 0 || k <= 0 {
		return 0
	}
	if len(got) > k {
		got = got[:k]
	}
	seen := make(map[int]bool, len(got))
	hits := 0
	for _, g := range got {
		if seen[g] {
			continue
		}
		seen[g] = true
		j := sort.SearchInts(q.Gold, g)
		if j < len(q.Gold) && q.Gold[j] == g {
			hits++
		}
	}
	return float64(hits) / float64(min(len(q.Gold), k))
}

// RecallStats averages Recall over queries, overall and per style.
type RecallStats struct {
	sum map[string]float64
	n   map[string]int
}

// Add records one query's result list (memory indexes in rank order).
func (s *RecallStats) Add(q Query, got []int, k int) {
	if s.sum == nil {
		s.sum, s.n = make(map[string]float64), make(map[string]int)
	}
	r := q.Recall(got, k)
	for _, key := range []string{"", q.Style} {
		s.sum[key] += r
		s.n[key]++
	}
}

// Mean is the mean recall of the queries of one style, or of all of them
// for style "".
func (s *RecallStats) Mean(style string) float64 {
	if s.n[style] == 0 {
		return 0
	}
	return s.sum[style] / float64(s.n[style])
}
