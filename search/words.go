package search

import (
	"strings"
	"unicode"
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

// countWords counts runs of letters and digits the way splitWords cuts
// them (an apostrophe inside a word does not end it), without allocating.
func countWords(s string) int {
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
