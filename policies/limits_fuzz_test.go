package policies

import (
	"context"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// fakeGroups is a fixed GroupView for the tests of this package.
type fakeGroups struct {
	info    map[string]GroupInfo
	members map[string]map[string]bool
}

func (g fakeGroups) GroupInfo(id string) (GroupInfo, bool) {
	i, ok := g.info[id]
	return i, ok
}

func (g fakeGroups) IsMember(group, pubkey string) bool { return g.members[group][pubkey] }

func (g fakeGroups) Moderates(group, pubkey string) bool { return false }

// nip01Prefixes are the machine-readable prefixes of NIP-01 OK and CLOSED
// messages.
var nip01Prefixes = []string{"invalid", "blocked", "restricted", "auth-required", "rate-limited", "duplicate", "error", "pow"}

// checkRefusal fails unless msg is a clear NIP-01 refusal: a known prefix,
// a colon, a space and some words.
func checkRefusal(t *testing.T, who, msg string) {
	t.Helper()
	prefix, rest, ok := strings.Cut(msg, ": ")
	known := false
	for _, p := range nip01Prefixes {
		known = known || p == prefix
	}
	if !ok || !known || strings.TrimSpace(rest) == "" {
		t.Fatalf("%s refusal %q does not start with a NIP-01 prefix (%s) followed by a reason", who, msg, strings.Join(nip01Prefixes, ": , "))
	}
}

const (
	fzOwner    = "0000000000000000000000000000000000000000000000000000000000000001"
	fzRelay    = "0000000000000000000000000000000000000000000000000000000000000002"
	fzAgent    = "0000000000000000000000000000000000000000000000000000000000000003"
	fzMember   = "0000000000000000000000000000000000000000000000000000000000000004"
	fzStranger = "0000000000000000000000000000000000000000000000000000000000000005"
)

// FuzzFilter parses arbitrary REQ filters the way khatru does and runs the
// filter-time policies on them for every kind of reader. They must never
// panic, and every refusal must carry a NIP-01 prefix.
func FuzzFilter(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`null`,
		`{"limit":0}`,
		`{"limit":-1}`,
		`{"limit":100000}`,
		`{"kinds":[1,1059,4,30078],"#p":["` + fzMember + `"]}`,
		`{"kinds":[1059]}`,
		`{"kinds":[4],"authors":["` + fzMember + `"],"#p":["` + fzStranger + `"]}`,
		`{"#h":["public","private","hidden","nosuch"],"kinds":[9,30078]}`,
		`{"#h":["public"]}`,
		`{"#d":["snowclaw:config:global","snow:memory:x"]}`,
		`{"ids":["abc"],"authors":["` + fzOwner + `"]}`,
		`{"ids":["` + fzOwner + `"],"authors":["xyz"]}`,
		`{"#hh":["x"]}`,
		`{"#":["x"]}`,
		`{"#h":null,"#p":[]}`,
		`{"since":1,"until":-5,"search":"hello"}`,
		`{"kinds":[9223372036854775807,-1]}`,
		`{"authors":[],"ids":[],"kinds":[]}`,
		`{"unknown":{"nested":[1,2,{"x":null}]}}`,
		`[1,2,3]`,
		`{"#h":["` + strings.Repeat("a", 200) + `"]}`,
		`{"limit":1e3}`,
		`{"ids":[1]}`,
		`{"#e":` + `["` + strings.Repeat(`a","`, 50) + `b"]}`,
	} {
		f.Add(seed)
	}
	ids := Identities{Owner: fzOwner, Relay: fzRelay, Agent: fzAgent}
	groups := fakeGroups{
		info: map[string]GroupInfo{
			"public":  {Restricted: true},
			"private": {Private: true, Restricted: true},
			"hidden":  {Private: true, Restricted: true, Hidden: true, Closed: true},
		},
		members: map[string]map[string]bool{
			"public":  {fzMember: true},
			"private": {fzMember: true, fzOwner: true},
			"hidden":  {fzMember: true},
		},
	}
	vis := &Visibility{IDs: ids, Groups: groups}
	limits := []Limits{DefaultLimits(), {MaxFilterValues: 3, MaxLimit: 10, DefaultLimit: 5}, {}}
	readers := []string{"", fzOwner, fzRelay, fzAgent, fzMember, fzStranger}

	f.Fuzz(func(t *testing.T, raw string) {
		var filter nostr.Filter
		if err := filter.UnmarshalJSON([]byte(raw)); err != nil {
			if err.Error() == "" {
				t.Fatal("filter parse error with an empty message")
			}
			return
		}
		ctx := context.Background()
		for _, l := range limits {
			reject, msg := outcome(l.RejectFilter(ctx, snowclaw.Filter{Filter: filter}))
			if reject {
				checkRefusal(t, "Limits.RejectFilter", msg)
				continue
			}
			if msg != "" {
				t.Fatalf("accepted filter with a message %q", msg)
			}
			n := l.ClampLimit(filter)
			if n != l.DefaultLimit && (n < 1 || (l.MaxLimit > 0 && n > l.MaxLimit)) {
				t.Fatalf("ClampLimit(%d) = %d, outside 1..%d", filter.Limit, n, l.MaxLimit)
			}
		}
		for _, reader := range readers {
			reject, msg := outcome(checkFilter(vis, reader, filter))
			if !reject {
				if msg != "" {
					t.Fatalf("accepted filter with a message %q", msg)
				}
				continue
			}
			checkRefusal(t, "Visibility.CheckFilter", msg)
			if ids.IsSystem(reader) && (strings.HasPrefix(msg, "restricted: you are not a member") || strings.Contains(msg, "does not exist or is for members only")) {
				t.Fatalf("the relay's own key %s was refused a group: %s", reader, msg)
			}
			if reader == "" && !strings.HasPrefix(msg, "auth-required: ") {
				t.Fatalf("anonymous reader refused without auth-required: %q", msg)
			}
		}
	})
}
