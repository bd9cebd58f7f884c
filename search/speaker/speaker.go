// Package speaker reads who is speaking in a memory or message written as
// "<Name>: <text>" (how agents and transcripts store what someone said),
// and which of those names a query mentions, so that a search for "what
// did Melanie paint?" prefers what Melanie said over what was said to her.
package speaker

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxName bounds the prefix read as a name: "Dr. Jane van Dyke" fits, a
// sentence that happens to hold a colon does not.
const (
	maxName  = 40
	maxWords = 3
)

// Of returns the lower-cased speaker of text, "" when text does not start
// with a name and a colon. A name is one to three words, each starting
// with an upper-case letter and made of letters, digits, '.', '-' or '\”.
func Of(text string) string {
	i := strings.IndexByte(text, ':')
	if i <= 0 || i > maxName || i+1 < len(text) && text[i+1] != ' ' {
		return "" // "http://…", "10:30" are not speakers
	}
	words := strings.Fields(text[:i])
	if len(words) == 0 || len(words) > maxWords {
		return ""
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) {
			return ""
		}
		for _, r := range w {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '-' && r != '\'' {
				return ""
			}
		}
	}
	return strings.ToLower(strings.Join(words, " "))
}

// Named returns the capitalised words of a query, lower-cased, without a
// trailing possessive: the names it may mention ("What did Melanie's kids
// like?" → what, melanie). The first word of a question is capitalised
// too; it matches no speaker unless one is called "What".
func Named(query string) map[string]bool {
	out := make(map[string]bool)
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' && r != '-' && r != '.'
	}) {
		w = strings.Trim(w, "'’-.")
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		r, _ := utf8.DecodeRuneInString(w)
		if w != "" && unicode.IsUpper(r) {
			out[strings.ToLower(w)] = true
		}
	}
	return out
}

// Factor is the weight of a doc said by speaker (Of) for a query naming
// names (Named): 1+boost when the query names the speaker (its full name
// or its first word), 1 otherwise.
func Factor(names map[string]bool, speaker string, boost float64) float64 {
	if boost <= 0 || speaker == "" || len(names) == 0 {
		return 1
	}
	if names[speaker] {
		return 1 + boost
	}
	if first, _, ok := strings.Cut(speaker, " "); ok && names[first] {
		return 1 + boost
	}
	return 1
}
