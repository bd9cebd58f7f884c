package search

import "unicode"

// countWords counts runs of letters and digits the way hashembed.Words cuts
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
