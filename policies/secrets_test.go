package policies

import (
	"strings"
	"sync"
	"testing"
)

// Throwaway keys generated for these tests.
const (
	testNsec  = "nsec1a826pkcmrrtj86yddutzznvqdt3xa7ngvtpzhy3ugws9vjw4sexsn6wyyq"
	testSkHex = "e9d5a0db1b18d723e88d6f16214d806ae26efa6862c22b923c43a05649d5864d"
	testPkHex = "299ed02e8537779781c1ec09e13bba57bff851297d525cf27dfd4b23a8ced10b"
	testNpub  = "npub19x0dqt59xame0qwpasy7zwa627lls5ff04f9eunal49j82xw6y9sxga6uu"
	otherPk   = "9c94f3face76306a7f09fed8c0cdcf3bbf8c5f06af617f825c577be6303ebaa9"
	otherNpub = "npub1nj2087kwwccx5lcflmvvpnw08wlcchcx4ashlqju2aa7vvp7h25sghkst5"
	ncrypt    = "ncryptsec1qgg9947rlpvqu76pj5ecreduf9jxhselq2nae2kghhvd5g7dgjtcxfqtd67p9m0w57lspw8gsq6yphnm8623nsl8xn9j4jdzz84zm3frztj3z7s35vpzmqf6ksu8r89qk5z2zxfmu5gv8th8wclt0h4p"
)

func TestKeyFilter_Sanitize(t *testing.T) {
	f := NewKeyFilter(testPkHex)
	flag := func(h string) string { return "[unverified hex " + h[:8] + "…]" }
	tests := []struct {
		name      string
		in, want  string
		nsec, hex int
	}{
		{"plain text unchanged", "hello nsec friends, npub1 is fine", "hello nsec friends, npub1 is fine", 0, 0},
		{"empty", "", "", 0, 0},
		{"nsec alone", testNsec, RedactedNsec, 1, 0},
		{"nsec at start", testNsec + " is my key", RedactedNsec + " is my key", 1, 0},
		{"nsec at end", "my key: " + testNsec, "my key: " + RedactedNsec, 1, 0},
		{"nsec in middle", "a " + testNsec + " b", "a " + RedactedNsec + " b", 1, 0},
		{"nsec glued to a word", "key=" + testNsec + "xyz!", "key=" + RedactedNsec + "!", 1, 0},
		{"nsec inside url", "https://x.io/login?k=" + testNsec + "&a=1", "https://x.io/login?k=" + RedactedNsec + "&a=1", 1, 0},
		{"uppercase nsec", strings.ToUpper(testNsec), RedactedNsec, 1, 0},
		{"two nsecs", testNsec + "\n" + testNsec, RedactedNsec + "\n" + RedactedNsec, 2, 0},
		{"short nsec-like survives", "nsec1abc", "nsec1abc", 0, 0},
		{"ten data chars redacted", "nsec1qqqqqqqqqq", RedactedNsec, 1, 0},
		{"ncryptsec", "backup " + ncrypt + " ok", "backup " + RedactedNcryptsec + " ok", 1, 0},
		{"hex secret key flagged", "sk " + testSkHex, "sk " + flag(testSkHex), 0, 1},
		{"unknown pubkey flagged", otherPk, flag(otherPk), 0, 1},
		{"uppercase unknown hex flagged", strings.ToUpper(otherPk), flag(strings.ToUpper(otherPk)), 0, 1},
		{"known pubkey passes", "owner " + testPkHex + ".", "owner " + testPkHex + ".", 0, 0},
		{"known pubkey uppercase passes", strings.ToUpper(testPkHex), strings.ToUpper(testPkHex), 0, 0},
		{"63 hex unchanged", testSkHex[:63], testSkHex[:63], 0, 0},
		{"65 hex unchanged", testSkHex + "a", testSkHex + "a", 0, 0},
		{"128 hex unchanged", testSkHex + otherPk, testSkHex + otherPk, 0, 0},
		{"hex after 0x flagged", "0x" + testSkHex, "0x" + flag(testSkHex), 0, 1},
		{"hex between letters flagged", "k:" + testSkHex + "/z", "k:" + flag(testSkHex) + "/z", 0, 1},
		{"npub unchanged", "see " + otherNpub, "see " + otherNpub, 0, 0},
		{"mixed", "me " + testPkHex + " sk " + testSkHex + " nsec " + testNsec + " " + otherPk,
			"me " + testPkHex + " sk " + flag(testSkHex) + " nsec " + RedactedNsec + " " + flag(otherPk), 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.Sanitize(tt.in)
			if got.Text != tt.want || got.RedactedNsec != tt.nsec || got.FlaggedHex != tt.hex {
				t.Errorf("Sanitize(%q)\n got %q nsec=%d hex=%d\nwant %q nsec=%d hex=%d",
					tt.in, got.Text, got.RedactedNsec, got.FlaggedHex, tt.want, tt.nsec, tt.hex)
			}
			// Longer hex runs pass by design; a lone key never does.
			if !strings.Contains(tt.want, testSkHex) && strings.Contains(strings.ToLower(got.Text), testSkHex) {
				t.Errorf("secret key passed through: %q", got.Text)
			}
		})
	}
}

func TestKeyFilter_Know(t *testing.T) {
	tests := []struct {
		name  string
		know  []string
		in    string
		flags int
	}{
		{"nothing known", nil, otherPk, 1},
		{"hex known", []string{otherPk}, otherPk, 0},
		{"npub known", []string{otherNpub}, otherPk, 0},
		{"uppercase hex known", []string{strings.ToUpper(otherPk)}, otherPk, 0},
		{"invalid ignored", []string{"not a key", otherPk[:32]}, otherPk, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewKeyFilter()
			f.Know(tt.know...)
			if got := f.Sanitize(tt.in).FlaggedHex; got != tt.flags {
				t.Errorf("FlaggedHex = %d, want %d", got, tt.flags)
			}
		})
	}
}

func TestKeyFilter_ConcurrentKnow(t *testing.T) {
	f := NewKeyFilter()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); f.Know(otherPk) }()
		go func() { defer wg.Done(); f.Sanitize("x " + otherPk + " " + testNsec) }()
	}
	wg.Wait()
	if got := f.Sanitize(otherPk); got.FlaggedHex != 0 {
		t.Errorf("known key flagged after concurrent Know: %+v", got)
	}
}
