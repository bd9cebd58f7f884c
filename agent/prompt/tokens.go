package prompt

import (
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts the tokens a model would see for a text. Counts only guide
// trimming, so a tokenizer of a different model family is good enough: the
// budget keeps a margin anyway.
type Counter interface {
	Count(s string) int
	Name() string // "cl100k_base" or "estimate"
}

// The BPE ranks are embedded in the loader module (no network at run time),
// but parsing them takes tens of milliseconds and some megabytes, so the
// tokenizer is built once, on first use, and shared: it is read-only after
// construction and safe for concurrent use.
var (
	defaultOnce    sync.Once
	defaultCounter Counter
)

// DefaultCounter returns the cl100k_base BPE tokenizer, or the estimate if
// the tokenizer cannot be built (which only a broken build would cause).
func DefaultCounter() Counter {
	defaultOnce.Do(func() {
		c, err := newBPECounter()
		if err != nil {
			defaultCounter = Estimate()
			return
		}
		defaultCounter = c
	})
	return defaultCounter
}

// cl100kPattern is tiktoken's pre-tokenizer for cl100k_base. The encoding is
// assembled here rather than through tiktoken.GetEncoding because that path
// needs tiktoken.SetBpeLoader, a process-wide setting other code may rely on.
const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

type bpeCounter struct{ enc *tiktoken.Tiktoken }

func newBPECounter() (*bpeCounter, error) {
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe("cl100k_base.tiktoken")
	if err != nil {
		return nil, err
	}
	special := map[string]int{
		tiktoken.ENDOFTEXT:   100257,
		tiktoken.FIM_PREFIX:  100258,
		tiktoken.FIM_MIDDLE:  100259,
		tiktoken.FIM_SUFFIX:  100260,
		tiktoken.ENDOFPROMPT: 100276,
	}
	core, err := tiktoken.NewCoreBPE(ranks, special, cl100kPattern)
	if err != nil {
		return nil, err
	}
	enc := &tiktoken.Encoding{
		Name:           tiktoken.MODEL_CL100K_BASE,
		PatStr:         cl100kPattern,
		MergeableRanks: ranks,
		SpecialTokens:  special,
	}
	set := make(map[string]any, len(special))
	for k := range special {
		set[k] = true
	}
	return &bpeCounter{enc: tiktoken.NewTiktoken(core, enc, set)}, nil
}

func (c *bpeCounter) Name() string { return tiktoken.MODEL_CL100K_BASE }

// Count encodes ordinary text only: special tokens typed by a user are
// counted as the text they are, and never make the encoder panic.
func (c *bpeCounter) Count(s string) int {
	n := 0
	for len(s) > 0 {
		var chunk string
		chunk, s = nextChunk(s)
		n += len(c.enc.EncodeOrdinary(chunk))
	}
	return n
}

// maxChunk bounds the text handed to the BPE encoder at once. Its merge step
// is quadratic in the length of one pre-token, and a message of 64 KB without
// a space would take seconds; cutting before whitespace keeps counts of normal
// prose exact (the pre-tokenizer starts a new token there anyway) and costs
// a token or so per cut inside one very long word.
const maxChunk = 256

// nextChunk splits s into a head of at most maxChunk bytes, ending just
// before whitespace when there is any, else on a rune boundary, and the rest.
func nextChunk(s string) (head, rest string) {
	if len(s) <= maxChunk {
		return s, ""
	}
	for i := maxChunk; i > 0; i-- {
		if isSpace(s[i]) && !isSpace(s[i-1]) {
			return s[:i], s[i:]
		}
	}
	i := maxChunk
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		// Not valid UTF-8 at all: any cut is as good as another.
		i = maxChunk
	}
	return s[:i], s[i:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// Estimate returns a counter that needs no tokenizer: one token per four
// runes of alphabetic text, rounded up, plus one token per CJK rune (Han,
// kana, Hangul), which BPE tokenizers rarely merge. It overestimates English
// slightly and is meant as a fallback and for tests that want speed.
func Estimate() Counter { return estimateCounter{} }

type estimateCounter struct{}

func (estimateCounter) Name() string { return "estimate" }

func (estimateCounter) Count(s string) int {
	other, cjk := 0, 0
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + int(math.Ceil(float64(other)/4))
}
