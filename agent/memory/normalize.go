package memory

import (
	"unicode"
	"unicode/utf8"
)

// SameNormalized reports whether Normalize(a) == Normalize(b) without
// building either string, stopping at the first rune that differs. A group
// keeps up to maxDecisions decisions and every stated decision was compared
// with each by normalising both: a hundred allocations per message, 3% of
// the relay's CPU under a stream of group chat (snowbench ingest --mix
// group).
func SameNormalized(a, b string) bool {
	ra, rb := normReader{s: a}, normReader{s: b}
	for {
		x, okA := ra.next()
		y, okB := rb.next()
		if okA != okB || x != y {
			return false
		}
		if !okA {
			return true
		}
	}
}

// normReader yields the runes of Normalize(s) one at a time; Normalize's
// rules, read from s as strings.ToLower then Normalize would (an invalid
// byte is utf8.RuneError either way).
type normReader struct {
	s       string
	i       int
	space   bool // a separator is due before the next rune written
	wrote   bool // a rune has been yielded
	pending rune // the rune after a yielded separator, when held
	held    bool
}

func (r *normReader) next() (rune, bool) {
	if r.held {
		r.held = false
		return r.pending, true
	}
	for r.i < len(r.s) {
		c := rune(r.s[r.i])
		if c < utf8.RuneSelf { // most text: no decoding, no tables
			r.i++
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			case c == '\'':
				continue
			case unicode.IsPunct(c) || unicode.IsSpace(c):
				r.space = r.wrote
				continue
			}
		} else {
			var n int
			c, n = utf8.DecodeRuneInString(r.s[r.i:])
			r.i += n
			c = unicode.ToLower(c)
			switch {
			case c == '’' || c == 'ʼ':
				continue
			case unicode.IsPunct(c) || unicode.IsSpace(c):
				r.space = r.wrote
				continue
			}
		}
		if r.space {
			r.space, r.pending, r.held = false, c, true
			return ' ', true
		}
		r.wrote = true
		return c, true
	}
	return 0, false
}

// normalizesEmpty reports whether Normalize(s) == "".
func normalizesEmpty(s string) bool {
	r := normReader{s: s}
	_, ok := r.next()
	return !ok
}
