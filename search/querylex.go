package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// queryToken is a free-text word, a quoted phrase, or key:value.
type queryToken struct {
	key, value string // key != "" for an extension
	word       string // free text
	phrase     bool   // word came in quotes
}

func (t queryToken) text() string {
	if t.phrase {
		return `"` + t.word + `"`
	}
	return t.word
}

// lexQuery splits s on white space, keeping quoted phrases and quoted
// extension values whole. An unterminated quote runs to the end.
func lexQuery(s string) []queryToken {
	var out []queryToken
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		if r == '"' {
			body, next := readQuoted(s, i+1)
			i = next
			if strings.TrimSpace(body) != "" {
				out = append(out, queryToken{word: body, phrase: true})
			}
			continue
		}
		start := i
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += n
		}
		word := s[start:i]
		key, val, ok := splitExtension(word)
		if !ok {
			out = append(out, queryToken{word: word})
			continue
		}
		if strings.HasPrefix(val, `"`) {
			// key:"value with spaces": the value runs to the closing quote.
			body, next := readQuoted(s, start+len(key)+2)
			i = next
			val = body
		}
		out = append(out, queryToken{key: strings.ToLower(key), value: val})
	}
	return out
}

// readQuoted returns the text from i up to the next '"' and the position
// after that quote.
func readQuoted(s string, i int) (string, int) {
	j := strings.IndexByte(s[i:], '"')
	if j < 0 {
		return s[i:], len(s)
	}
	return s[i : i+j], i + j + 1
}

// splitExtension recognises key:value with a key of letters, digits and
// underscores starting with a letter. URLs ("https://…") and times
// ("10:30") are not extensions.
func splitExtension(w string) (key, val string, ok bool) {
	k, v, found := strings.Cut(w, ":")
	if !found || k == "" || v == "" || strings.HasPrefix(v, "//") {
		return "", "", false
	}
	for i, r := range k {
		switch {
		case r < utf8.RuneSelf && unicode.IsLetter(r):
		case i > 0 && (r == '_' || (r >= '0' && r <= '9')):
		default:
			return "", "", false
		}
	}
	return k, v, true
}
