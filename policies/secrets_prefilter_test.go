package policies

import (
	"strings"
	"testing"
)

// The prefilter must never skip a text the pattern matches: (?i) makes
// "ſ" (long s) and "K" (Kelvin sign) match s and k, and upper case any.
func TestKeyFilter_SanitizeFoldedSecrets(t *testing.T) {
	f := NewKeyFilter()
	tests := []struct{ name, in, want string }{
		{"long s", "a nſec1qqqqqqqqqq b", "a " + RedactedNsec + " b"},
		{"kelvin sign in the data", "nsec1qqqqqqqqq\u212a", RedactedNsec},
		{"mixed case", "NsEc1QQQQQQQQQQ", RedactedNsec},
		{"ncryptsec mixed case", "NCRYPTSEC1qqqqqqqqqq", RedactedNcryptsec},
		{"1 at the start", "1nsec1qqqqqqqqqq", "1" + RedactedNsec},
		{"ec1 without a key", "spec1 sec1 ec1", "spec1 sec1 ec1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.Sanitize(tt.in).Text; got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Chat without a key is the common case: sanitising it must cost no
// allocation (the regexp ran over every message before).
func TestKeyFilter_SanitizePlainAllocs(t *testing.T) {
	f := NewKeyFilter(testPkHex)
	text := strings.Repeat("Decided with Alice to move the billing service from Monday to Friday. ", 3)
	if n := testing.AllocsPerRun(100, func() { _ = f.Sanitize(text) }); n != 0 {
		t.Errorf("Sanitize of plain text: %v allocations, want 0", n)
	}
}

// FuzzMayHoldSecret: whatever the pattern matches, the prefilter lets
// through.
func FuzzMayHoldSecret(f *testing.F) {
	for _, s := range []string{testNsec, ncrypt, "nſec1qqqqqqqqqq", "NSEC1QQQQQQQQQQ", "x ec1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if secretPattern.MatchString(s) && !mayHoldSecret(s) {
			t.Fatalf("pattern matches %q, prefilter skips it", s)
		}
	})
}
