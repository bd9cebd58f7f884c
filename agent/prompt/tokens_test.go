package prompt

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestDefaultCounter_Count(t *testing.T) {
	c := DefaultCounter()
	if c.Name() != "cl100k_base" {
		t.Fatalf("DefaultCounter is %q, want the embedded cl100k_base tokenizer", c.Name())
	}
	tests := []struct {
		name     string
		in       string
		min, max int
	}{
		{"empty", "", 0, 0},
		{"hello world", "hello world", 2, 2},
		{"sentence", "The quick brown fox jumps over the lazy dog.", 10, 10},
		{"cjk", "你好世界，今天天气很好", 5, 20},
		{"special token is plain text", "<|endoftext|>", 2, 10},
		{"nostr header", "[nostr:group=#techteam from=k0 kind=9 id=abc12345]", 8, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Count(tt.in); got < tt.min || got > tt.max {
				t.Errorf("Count(%q) = %d, want %d..%d", tt.in, got, tt.min, tt.max)
			}
		})
	}
}

// Chunking must not change the count of ordinary prose, which is cut only
// before whitespace where the pre-tokenizer splits anyway.
func TestDefaultCounter_ChunkedProseExact(t *testing.T) {
	c := DefaultCounter().(*bpeCounter)
	prose := strings.Repeat("Snowclaw keeps memories as Nostr events, and the relay stores them. ", 40)
	whole := len(c.enc.EncodeOrdinary(prose))
	if got := c.Count(prose); got != whole {
		t.Errorf("chunked count %d, whole-text count %d", got, whole)
	}
}

func TestDefaultCounter_LongWord(t *testing.T) {
	// Without chunking this takes seconds (quadratic BPE merge); with it the
	// count stays close to the true one (8000 tokens for 64000 "a").
	got := DefaultCounter().Count(strings.Repeat("a", 64000))
	if got < 7900 || got > 8500 {
		t.Errorf("Count of 64000 a = %d, want about 8000", got)
	}
	cjk := DefaultCounter().Count(strings.Repeat("零一二三四五", 3000))
	if cjk < 1000 {
		t.Errorf("Count of long CJK run = %d, want more", cjk)
	}
}

func TestDefaultCounter_Concurrent(t *testing.T) {
	var wg sync.WaitGroup
	counts := make([]int, 8)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i] = DefaultCounter().Count("hello world, hello relay")
		}()
	}
	wg.Wait()
	for i, n := range counts {
		if n != counts[0] {
			t.Errorf("goroutine %d counted %d, goroutine 0 counted %d", i, n, counts[0])
		}
	}
}

func TestEstimate_Count(t *testing.T) {
	c := Estimate()
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"one rune", "a", 1},
		{"four runes", "abcd", 1},
		{"five runes", "abcde", 2},
		{"hello world", "hello world", 3},
		{"cjk one per rune", "你好世界", 4},
		{"mixed", "hi 你好", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Count(tt.in); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
	if c.Name() != "estimate" {
		t.Errorf("Name = %q", c.Name())
	}
}

func TestNextChunk_Bounds(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"short", "hello"},
		{"words", strings.Repeat("word ", 200)},
		{"no spaces", strings.Repeat("x", 1000)},
		{"multibyte", strings.Repeat("é你", 300)},
		{"all spaces", strings.Repeat(" ", 700)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parts []string
			for s := tt.in; s != ""; {
				var h string
				h, s = nextChunk(s)
				if len(h) == 0 || len(h) > maxChunk {
					t.Fatalf("chunk of %d bytes", len(h))
				}
				if utf8.ValidString(tt.in) && !utf8.ValidString(h) {
					t.Fatalf("chunk %q cuts a rune", h)
				}
				parts = append(parts, h)
			}
			if strings.Join(parts, "") != tt.in {
				t.Errorf("chunks do not join back to the input")
			}
		})
	}
}
