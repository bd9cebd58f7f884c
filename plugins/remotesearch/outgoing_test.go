package remotesearch

import (
	"slices"
	"testing"

	"github.com/snowclaw/snowclaw"
)

// What a remote is sent for each query: the text and public extensions,
// or nothing at all for a scoped query.
func TestOutgoing(t *testing.T) {
	for _, tc := range []struct {
		q, sent string
		stays   bool
	}{
		{"airship fleet include:remote", "airship fleet", false},
		{"airship topic:fleet/ops model:anthropic/* min_confidence:0.5 include:remote explain:true", "airship topic:fleet/ops model:anthropic/* min_confidence:0.5", false},
		{"airship since:1700000000 include:superseded include:remote", "airship since:1700000000", false},
		{"airship tier:public include:remote", "airship", false},
		{"airship group:crew include:remote", "", true},
		{"airship tier:private include:remote", "", true},
		{"airship tier:internal include:remote", "", true},
		{"airship tier:public tier:group include:remote", "", true},
	} {
		q, err := snowclaw.ParseSearch(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		out, ok := outgoing(q)
		if ok == tc.stays {
			t.Errorf("%q: sent %v, want sent %v", tc.q, ok, !tc.stays)
			continue
		}
		if ok && out.String() != tc.sent {
			t.Errorf("%q: sent %q, want %q", tc.q, out.String(), tc.sent)
		}
	}
}

// The fallback for a relay without NIP-50: t tags from the query's words
// and topics, and the latest memory items; NIP-50 gets one search filter.
func TestFilters(t *testing.T) {
	q, _ := snowclaw.ParseSearch("Airship fleet refuels topic:ops at dawn")
	fs := filters(q, false, 50)
	if len(fs) != 2 || fs[0].Search != "" || fs[1].Search != "" {
		t.Fatalf("fallback %v", fs)
	}
	if want := []string{"ops", "airship", "fleet", "refuels", "dawn"}; !slices.Equal(fs[0].Tags["t"], want) {
		t.Fatalf("t tags %v, want %v", fs[0].Tags["t"], want)
	}
	if !slices.Equal(fs[1].Kinds, []int{snowclaw.KindAppData}) || fs[1].Limit != 50 || len(fs[1].Tags) != 0 {
		t.Fatalf("latest filter %v", fs[1])
	}
	fs = filters(q, true, 50)
	if len(fs) != 1 || fs[0].Search != "Airship fleet refuels at dawn topic:ops" {
		t.Fatalf("NIP-50 filter %v", fs)
	}
}
