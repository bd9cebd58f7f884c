package workspace

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// chunkText cuts text into chunks of at most maxWords words. Each cut is
// made at the strongest boundary in the second half of the window: a
// paragraph (blank line or a Markdown heading), then a line, then a
// sentence end, else between words. Consecutive chunks share up to overlap
// words, the shared part starting at a line or sentence start when there is
// one. Chunks are verbatim slices of text; blank text has no chunks.
func chunkText(text string, maxWords, overlap int) []string {
	type word struct{ start, end, brk int } // brk: strength of the boundary before the word
	var ws []word
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += n
		}
		w := word{start: i, end: j}
		if k := len(ws); k > 0 {
			gap := text[ws[k-1].end:i]
			nl := strings.Count(gap, "\n")
			switch {
			case nl >= 2 || (nl == 1 && text[i] == '#'):
				w.brk = 3
			case nl == 1:
				w.brk = 2
			case sentenceEnd(text[ws[k-1].start:ws[k-1].end]):
				w.brk = 1
			}
		}
		ws = append(ws, w)
		i = j
	}
	maxWords = max(maxWords, 1)
	minWords := max(maxWords/2, 1)
	overlap = max(min(overlap, minWords-1), 0) // each chunk moves on by at least one word
	var out []string
	for s := 0; s < len(ws); {
		if len(ws)-s <= maxWords {
			out = append(out, text[ws[s].start:ws[len(ws)-1].end])
			break
		}
		end, best := s+maxWords, -1
		for b := s + maxWords; b >= s+minWords; b-- {
			if ws[b].brk > best {
				end, best = b, ws[b].brk
			}
		}
		out = append(out, text[ws[s].start:ws[end-1].end])
		next := end - overlap
		for j := next; j < end; j++ {
			if ws[j].brk >= 1 {
				next = j
				break
			}
		}
		s = max(next, s+1)
	}
	return out
}

func sentenceEnd(w string) bool {
	w = strings.TrimRight(w, "\"')]*_`»”’")
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "!") || strings.HasSuffix(w, "?")
}
