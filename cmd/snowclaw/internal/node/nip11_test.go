package node_test

import (
	"encoding/json"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// nip11 fetches the relay's NIP-11 document as a client would.
func (e *testEnv) nip11(accept string) (map[string]json.RawMessage, *http.Response) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL, nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		e.t.Fatalf("NIP-11 with Accept %q: %v", accept, err)
	}
	return doc, resp
}

// TestNIP11_LimitsAreEnforced reads every limit the relay advertises in
// NIP-11 and checks over a real socket that the relay enforces exactly
// that value: at the value accepted, one past it refused (or, for
// max_limit and default_limit, the answer is cut to it). Every key of
// "limitation" must have a row here, so a limit advertised later without
// a test fails this test.
func TestNIP11_LimitsAreEnforced(t *testing.T) {
	e := startEnv(t, func(o *node.Options) {
		// small values keep the test quick; the document must follow them
		o.MaxMessageBytes = 4096
		o.Limits.MaxLimit, o.Limits.DefaultLimit = 5, 3
		o.Limits.MaxTags, o.Limits.MaxContentBytes = 20, 1000
		o.Limits.MaxFilters, o.Limits.MaxSubscriptions, o.Limits.MaxSubIDLength = 3, 4, 16
		o.Limits.MaxFutureSeconds = 60
	})
	doc, _ := e.nip11("application/nostr+json")
	var lim map[string]json.RawMessage
	if err := json.Unmarshal(doc["limitation"], &lim); err != nil {
		t.Fatalf("limitation: %v", err)
	}
	num := func(key string) int {
		t.Helper()
		n, err := strconv.Atoi(string(lim[key]))
		if err != nil || n <= 0 {
			t.Fatalf("limitation.%s = %s, want a positive number", key, lim[key])
		}
		return n
	}
	alice := newUser()
	for _, tc := range []struct {
		key   string
		check func(t *testing.T, n int)
	}{
		{"max_message_length", func(t *testing.T, n int) {
			frame := func(size int) []byte { // a REQ padded to exactly size bytes
				head, tail := `["REQ","big",{"kinds":[1],"#t":["`, `"]}]`
				return []byte(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
			}
			c := e.connect(nil)
			if err := c.SendRaw(frame(n)); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.WaitFor("EOSE", "big", testwait.Scaled(5*time.Second)); !ok {
				t.Fatalf("a %d-byte message was not answered:\n%s", n, c.All())
			}
			c2 := e.connect(nil)
			c2.SendRaw(frame(n + 1))
			select {
			case <-c2.Done():
			case <-time.After(testwait.Scaled(5 * time.Second)):
				t.Fatalf("a %d-byte message did not end the connection:\n%s", n+1, c2.All())
			}
		}},
		{"max_subscriptions", func(t *testing.T, n int) {
			c := e.raw()
			for i := range n + 1 {
				c.send("REQ", "s"+strconv.Itoa(i), nostr.Filter{Kinds: []int{1}})
			}
			for i := range n {
				if _, ok := c.waitFor("EOSE", "s"+strconv.Itoa(i), 5*time.Second); !ok {
					t.Fatalf("subscription %d of %d refused:\n%s", i+1, n, c.all())
				}
			}
			closedWith(t, c, "s"+strconv.Itoa(n), "blocked:")
			// reusing an open id replaces it and is no new subscription
			c.send("REQ", "s0", nostr.Filter{Kinds: []int{1}})
			c.send("CLOSE", "s1")
			c.send("REQ", "again", nostr.Filter{Kinds: []int{1}})
			if _, ok := c.waitFor("EOSE", "again", 5*time.Second); !ok {
				t.Fatalf("a subscription after a CLOSE was refused:\n%s", c.all())
			}
		}},
		{"max_filters", func(t *testing.T, n int) {
			c := e.raw()
			fs := make([]any, 0, n+3)
			for range n + 1 {
				fs = append(fs, nostr.Filter{Kinds: []int{1}})
			}
			c.send(append([]any{"REQ", "at"}, fs[:n]...)...)
			if _, ok := c.waitFor("EOSE", "at", 5*time.Second); !ok {
				t.Fatalf("%d filters refused:\n%s", n, c.all())
			}
			c.send(append([]any{"REQ", "over"}, fs...)...)
			closedWith(t, c, "over", "invalid:")
		}},
		{"max_subid_length", func(t *testing.T, n int) {
			c := e.raw()
			at, over := strings.Repeat("a", n), strings.Repeat("b", n+1)
			c.send("REQ", at, nostr.Filter{Kinds: []int{1}})
			if _, ok := c.waitFor("EOSE", at, 5*time.Second); !ok {
				t.Fatalf("a %d-character id refused:\n%s", n, c.all())
			}
			c.send("REQ", over, nostr.Filter{Kinds: []int{1}})
			closedWith(t, c, over, "invalid:")
		}},
		{"max_limit", func(t *testing.T, n int) {
			c := e.connect(nil)
			author := newUser()
			for i := range n + 2 {
				e.mustPublish(c, mkEvent(author, 1, nil, "limit "+strconv.Itoa(i)))
			}
			for _, limit := range []int{n, n + 1} {
				evs, closed := fetch(t, c, nostr.Filter{Authors: []string{author.pk}, Limit: limit})
				if closed != "" || len(evs) != n {
					t.Fatalf("limit %d: %d events (closed %q), want %d", limit, len(evs), closed, n)
				}
			}
		}},
		{"default_limit", func(t *testing.T, n int) {
			c := e.connect(nil)
			author := newUser()
			for i := range n + 1 {
				e.mustPublish(c, mkEvent(author, 1, nil, "default "+strconv.Itoa(i)))
			}
			evs, _ := fetch(t, c, nostr.Filter{Authors: []string{author.pk}})
			if len(evs) != n {
				t.Fatalf("no limit: %d events, want default_limit %d", len(evs), n)
			}
		}},
		{"max_event_tags", func(t *testing.T, n int) {
			c := e.connect(nil)
			tags := func(k int) nostr.Tags {
				out := nostr.Tags{}
				for i := range k {
					out = append(out, nostr.Tag{"t", strconv.Itoa(i)})
				}
				return out
			}
			e.mustPublish(c, mkEvent(alice, 1, tags(n), "tags at the limit"))
			e.refusedWith(c, mkEvent(alice, 1, tags(n+1), "tags over the limit"), "invalid:")
		}},
		{"max_content_length", func(t *testing.T, n int) {
			c := e.connect(nil)
			e.mustPublish(c, mkEvent(alice, 1, nil, strings.Repeat("c", n)))
			e.refusedWith(c, mkEvent(alice, 1, nil, strings.Repeat("d", n+1)), "invalid:")
		}},
		{"created_at_upper_limit", func(t *testing.T, n int) {
			c := e.connect(nil)
			dated := func(ts nostr.Timestamp, content string) nostr.Event {
				evt := nostr.Event{Kind: 1, Tags: nostr.Tags{}, Content: content, CreatedAt: ts}
				evt.Sign(alice.sk)
				return evt
			}
			// the relay reads its clock after ours, so now+n is never
			// ahead of its limit
			e.mustPublish(c, dated(nostr.Now()+nostr.Timestamp(n), "at the upper limit"))
			// one second past it is refused by a relay whose clock read
			// the same second as ours; when the second turned during the
			// round trip the answer proves nothing, so try again
			for try := 0; ; try++ {
				before := nostr.Now()
				err := publish(c, dated(before+nostr.Timestamp(n)+1, "past the upper limit "+strconv.Itoa(try)))
				if nostr.Now() != before {
					if try > 20 {
						t.Fatal("the clock turned during every attempt")
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), "invalid:") {
					t.Fatalf("created_at now+%d: err = %v, want invalid:", n+1, err)
				}
				break
			}
		}},
	} {
		t.Run(tc.key, func(t *testing.T) { tc.check(t, num(tc.key)) })
		delete(lim, tc.key)
	}

	// the flags: public data needs no auth and no payment, and writes
	// are restricted (config from the owner only)
	for key, want := range map[string]string{"auth_required": "false", "payment_required": "false", "restricted_writes": "true"} {
		if string(lim[key]) != want {
			t.Errorf("limitation.%s = %s, want %s", key, lim[key], want)
		}
		delete(lim, key)
	}
	anon := e.connect(nil)
	if _, closed := fetch(t, anon, nostr.Filter{Kinds: []int{1}}); closed != "" {
		t.Errorf("auth_required is false but an anonymous REQ was closed: %q", closed)
	}
	e.mustPublish(anon, mkEvent(newUser(), 1, nil, "nobody paid for this"))
	e.refusedWith(anon, mkEvent(alice, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, `{"respond_mode":"all"}`), "restricted:")

	if len(lim) > 0 {
		t.Errorf("limitation advertises keys this test does not check: %v", slices.Collect(mapsKeys(lim)))
	}
}

func mapsKeys(m map[string]json.RawMessage) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// closedWith waits for CLOSED on sub and checks its reason's prefix.
func closedWith(t *testing.T, c *rawConn, sub, prefix string) {
	t.Helper()
	arr, ok := c.waitFor("CLOSED", sub, 5*time.Second)
	if !ok {
		t.Fatalf("no CLOSED for %q:\n%s", sub, c.all())
	}
	var reason string
	json.Unmarshal(arr[2], &reason)
	if !strings.HasPrefix(reason, prefix) {
		t.Fatalf("CLOSED %q: reason %q, want prefix %q", sub, reason, prefix)
	}
}

// TestNIP11_Document: the document is honest about what this relay is:
// NIPs sorted and only those implemented, no empty icon or banner, the
// policy links from the options, and CORS for web clients, including the
// browser's preflight.
func TestNIP11_Document(t *testing.T) {
	e := startEnv(t, func(o *node.Options) {
		o.PostingPolicy = "https://relay.example.com/posting"
		o.PrivacyPolicy = "https://relay.example.com/privacy"
	})
	for _, accept := range []string{"application/nostr+json", "application/nostr+json, application/json;q=0.9"} {
		doc, resp := e.nip11(accept)
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Content-Type") != "application/nostr+json" {
			t.Fatalf("Accept %q: headers %v", accept, resp.Header)
		}
		var d struct {
			Name, PubKey, Self, Software, Version string
			PostingPolicy                         string `json:"posting_policy"`
			PrivacyPolicy                         string `json:"privacy_policy"`
			SupportedNIPs                         []int  `json:"supported_nips"`
		}
		b, _ := json.Marshal(doc)
		json.Unmarshal(b, &d)
		if d.PubKey != e.owner.pk || d.Self != e.relay.pk || d.Software == "" || d.Version != "test" || d.Name != "snowclaw-test" {
			t.Fatalf("document %s", b)
		}
		if !slices.IsSorted(d.SupportedNIPs) || !slices.Equal(d.SupportedNIPs, []int{1, 9, 11, 17, 29, 40, 42, 45, 70, 98}) {
			t.Fatalf("supported_nips %v: want sorted, without 50 (search is off here) or 77", d.SupportedNIPs)
		}
		if d.PostingPolicy != "https://relay.example.com/posting" || d.PrivacyPolicy != "https://relay.example.com/privacy" {
			t.Fatalf("policies %q %q", d.PostingPolicy, d.PrivacyPolicy)
		}
		for _, key := range []string{"icon", "banner", "terms_of_service", "contact"} {
			if v, ok := doc[key]; ok {
				t.Errorf("unset %s is in the document as %s", key, v)
			}
		}
	}

	for _, tc := range []struct {
		name   string
		header map[string]string
	}{
		{"preflight", map[string]string{"Origin": "https://client.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "accept"}},
		{"with Accept", map[string]string{"Accept": "application/nostr+json"}},
	} {
		req, _ := http.NewRequest("OPTIONS", e.srv.URL+"/", nil)
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "accept") ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "GET") {
			t.Fatalf("OPTIONS %s: %d %v", tc.name, resp.StatusCode, h)
		}
	}
}

// TestNIP11_SearchListed: with search on, 50 joins the list, in order.
func TestNIP11_SearchListed(t *testing.T) {
	e := startEnv(t, withSearch)
	doc, _ := e.nip11("application/nostr+json")
	var nips []int
	json.Unmarshal(doc["supported_nips"], &nips)
	if !slices.IsSorted(nips) || !slices.Contains(nips, 50) {
		t.Fatalf("supported_nips %v: want 50, sorted", nips)
	}
}
