package snowclaw

import "testing"

// nip01Prefixes are the machine-readable prefixes a client may find at the
// start of an OK or CLOSED reason: the ones NIP-01 standardizes and
// NIP-42's auth-required. Written out from the NIPs, not from reasonInfo.
var nip01Prefixes = map[string]bool{
	"duplicate": true, "pow": true, "blocked": true, "rate-limited": true, "invalid": true,
	"restricted": true, "mute": true, "error": true, "auth-required": true,
}

// TestReasons_NIP01Prefixes: every reason reaches websocket clients with a
// prefix NIP-01 (or NIP-42) defines, the one its meaning shares, and a
// reason added without a row here fails.
func TestReasons_NIP01Prefixes(t *testing.T) {
	want := map[Reason]string{
		ReasonError:        "error",
		ReasonInvalid:      "invalid",
		ReasonBlocked:      "blocked",
		ReasonRestricted:   "restricted",
		ReasonDuplicate:    "duplicate",
		ReasonRateLimited:  "rate-limited",
		ReasonAuthRequired: "auth-required",
		ReasonPoW:          "pow",
		ReasonUnsupported:  "blocked", // turned off here, for everyone: not a failure that passes
		ReasonNotFound:     "invalid", // names nothing there is for the asker; never "exists, not yours"
		ReasonDiskFull:     "error",   // passes when the disk has room again: error: … try again
		ReasonUnavailable:  "error",   // passes when the store or the agent is back: error: … try again
	}
	for r := Reason(0); r < numReasons; r++ {
		w, ok := want[r]
		if !ok {
			t.Errorf("reason %d (%q) has no row here: say which NIP-01 prefix it is", r, r.Prefix())
			continue
		}
		if got := r.Prefix(); got != w || !nip01Prefixes[got] {
			t.Errorf("reason %d: wire prefix %q, want %q (NIP-01: %v)", r, got, w, nip01Prefixes[got])
		}
	}
}
