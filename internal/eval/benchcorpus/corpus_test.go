package benchcorpus

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode"

	porter "github.com/blevesearch/go-porterstemmer"
)

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func TestDeterministicAndPrefixStable(t *testing.T) {
	a := Generate(7, 600)
	if !reflect.DeepEqual(a, Generate(7, 600)) {
		t.Fatal("same seed, different corpus")
	}
	if !reflect.DeepEqual(a[:250], Generate(7, 250)) {
		t.Fatal("Generate(seed, k) is not a prefix of Generate(seed, n)")
	}
	if reflect.DeepEqual(a[:50], Generate(8, 50)) {
		t.Fatal("different seeds, same corpus")
	}
	if !reflect.DeepEqual(Queries(a, 3, 40), Queries(a, 3, 40)) {
		t.Fatal("same seed, different queries")
	}
	topics := make(map[string]bool)
	for i, m := range a {
		if topics[m.Topic] {
			t.Fatalf("memory %d: topic %s is not unique", i, m.Topic)
		}
		topics[m.Topic] = true
		if i > 0 && m.CreatedAt <= a[i-1].CreatedAt {
			t.Fatalf("memory %d: created_at does not increase", i)
		}
	}
}

// The gold sets are only exact if a memory states an attribute word exactly
// when it has the key, and no filler word stems like an attribute.
func TestKeysAreExactlyTheAttributeWords(t *testing.T) {
	attr := make(map[string]string) // word → key
	stems := make(map[string]string)
	addAttr := func(kind, w string) {
		if k, dup := attr[w]; dup {
			t.Fatalf("%q is both %s and %s:%s", w, k, kind, w)
		}
		attr[w] = kind + ":" + w
		st := porter.StemString(w)
		if o, dup := stems[st]; dup {
			t.Fatalf("%q and %q share the stem %q", w, o, st)
		}
		stems[st] = w
	}
	for _, p := range people {
		addAttr("person", p)
	}
	for _, p := range projects {
		addAttr("project", p)
	}
	for _, x := range techs {
		addAttr("tech", x)
	}
	variants := make(map[string]bool)
	for _, c := range components {
		addAttr("component", c[0])
		variants[c[1]] = true
		if c[0] == c[1] || porter.StemString(c[0]) != porter.StemString(c[1]) {
			t.Fatalf("component variant %q of %q: want another spelling with the same stem", c[1], c[0])
		}
	}
	reported := make(map[string]bool)
	for i, m := range Generate(11, 3000) {
		var found []string
		for _, w := range tokens(m.Content) {
			if variants[w] {
				t.Fatalf("memory %d uses the query-only variant %q: %s", i, w, m.Content)
			}
			if k, ok := attr[w]; ok {
				found = append(found, k)
				continue
			}
			if o, ok := stems[porter.StemString(w)]; ok && !reported[w] {
				reported[w] = true
				t.Errorf("memory %d: filler word %q stems like attribute %q: %s", i, w, o, m.Content)
			}
		}
		sort.Strings(found)
		got := dedupe(found)
		if !reflect.DeepEqual(got, m.Keys) {
			t.Fatalf("memory %d: keys %v, text states %v: %s", i, m.Keys, got, m.Content)
		}
		if m.Key("project") == "" || m.Key("component") == "" || !strings.Contains(m.Topic, "/"+m.Key("project")+"/"+m.Key("component")+"/") {
			t.Fatalf("memory %d: topic %s does not name its project and component %v", i, m.Topic, m.Keys)
		}
	}
}

func TestQueries(t *testing.T) {
	mems := Generate(5, 2000)
	qs := Queries(mems, 9, 200)
	styles := make(map[string]int)
	for i, q := range qs {
		styles[q.Style]++
		if q.Text == "" || len(q.Keys) != 3 {
			t.Fatalf("query %d: %+v", i, q)
		}
		hasTarget := false
		for _, g := range q.Gold {
			hasTarget = hasTarget || g == q.Target
			if !containsAll(mems[g].Keys, q.Keys) {
				t.Fatalf("query %d: gold memory %d lacks %v", i, g, q.Keys)
			}
		}
		if !hasTarget {
			t.Fatalf("query %d: gold %v lacks the target %d", i, q.Gold, q.Target)
		}
		n := 0
		for _, m := range mems {
			if containsAll(m.Keys, q.Keys) {
				n++
			}
		}
		if n != len(q.Gold) {
			t.Fatalf("query %d: %d gold memories, %d state all keys", i, len(q.Gold), n)
		}
		comp := strings.TrimPrefix(q.Keys[0], "component:")
		has := func(w string) bool { return strings.Contains(" "+q.Text+" ", " "+w+" ") }
		switch q.Style {
		case StyleKeywords:
			if !has(comp) {
				t.Fatalf("query %d: %q lacks the component %q", i, q.Text, comp)
			}
		case StyleVariant:
			if has(comp) || !has(variantOf(comp)) {
				t.Fatalf("query %d: %q should name %q as %q", i, q.Text, comp, variantOf(comp))
			}
		}
	}
	for _, s := range Styles {
		if styles[s] != 50 {
			t.Fatalf("style %s: %d queries, want 50", s, styles[s])
		}
	}

	q := Query{Gold: []int{2, 5, 9}}
	if r := q.Recall([]int{5, 1, 5, 9}, 10); r != 2.0/3 {
		t.Fatalf("recall %v, want 2/3", r)
	}
	if r := q.Recall([]int{1, 2}, 1); r != 0 {
		t.Fatalf("recall@1 %v, want 0", r)
	}
	var st RecallStats
	st.Add(Query{Style: StyleTypo, Gold: []int{1}}, []int{1}, 10)
	st.Add(Query{Style: StyleKeywords, Gold: []int{1}}, []int{2}, 10)
	if st.Mean("") != 0.5 || st.Mean(StyleTypo) != 1 || st.Mean(StyleKeywords) != 0 {
		t.Fatalf("stats %v %v %v", st.Mean(""), st.Mean(StyleTypo), st.Mean(StyleKeywords))
	}
}
