package hashembed

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopWords carry no topic; they are left out of the built-in embedding.
var stopWords = setOf(`a about above after again against all am an and any are
as at be because been before being below between both but by can could did do
does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me
more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under
until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves im ive id youre dont doesnt didnt
cant wont isnt thats whats lets s t m ll re ve d`)

// commonWords are frequent in conversation yet say little about what a
// message is about; they keep a damped weight rather than none, a static
// stand-in for the idf an embedder without corpus statistics cannot know.
var commonWords = setOf(`yeah yes oh hey hi hello wow really great good nice
awesome cool thanks thank glad love like so much lot lots totally definitely
sure know think thought feel feeling felt get got go going gonna want wanted
make made thing things time times day today way also always never ever well
just still even something anything everything one two new sounds sound amazing
absolutely super pretty kind right okay ok see look looks looking fun happy
tell told say said talk talking hope wish mean means`)

func setOf(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// IsStop reports whether w (lower case) is a stop word.
func IsStop(w string) bool { return stopWords[w] }

// Words lower-cases s and cuts it into runs of letters and digits.
// Apostrophes inside a word are dropped ("don't" → "dont") and a trailing
// possessive "'s" is removed, like the BM25 analyzer does. The words are
// cut from one string, not allocated one by one.
func Words(s string) []string {
	b := make([]byte, 0, len(s))
	var ends []int
	start, apos := 0, false // the word under way is b[start:]; it has an apostrophe
	flush := func() {
		if len(b) == start {
			return
		}
		if n := len(b) - start; n > 2 && b[len(b)-2] == '\'' && b[len(b)-1] == 's' {
			b = b[:len(b)-2]
		}
		if apos {
			j := start
			for _, c := range b[start:] {
				if c != '\'' {
					b[j] = c
					j++
				}
			}
			b = b[:j]
		}
		ends = append(ends, len(b))
		start, apos = len(b), false
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b = utf8.AppendRune(b, unicode.ToLower(r))
		case (r == '\'' || r == '’') && len(b) > start:
			b, apos = append(b, '\''), true
		default:
			flush()
		}
	}
	flush()
	all := string(b)
	words := make([]string, len(ends))
	from := 0
	for i, end := range ends {
		words[i], from = all[from:end], end
	}
	return words
}

// Hash is FNV-1a, 64 bit: stable across runs and platforms, which the
// stored vectors depend on.
func Hash(s string) uint64 { return hashMore(14695981039346656037, s) }

// hashMore is Hash of what h hashed followed by s.
func hashMore(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func hashMoreBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// CountWords counts runs of letters and digits the way Words cuts them (an
// apostrophe inside a word does not end it), without allocating.
func CountWords(s string) int {
	n, in := 0, false
	for _, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r) || (in && (r == '\'' || r == '’'))
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// QueryOf picks n words of text that are not stop words, as a short query
// would, by h (the same h picks the same words): the vector floor's
// pseudo-queries (search/floor.go).
func QueryOf(text string, h uint64, n int) string {
	var words []string
	for _, w := range Words(text) {
		if !IsStop(w) && len(w) > 2 {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return ""
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, words[(h>>(8*i))%uint64(len(words))])
	}
	return strings.Join(out, " ")
}
