package node_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// The owner's status report (GET /api/v1/status) and the agent routes
// the web UI's owner view reads: the owner's alone. Everyone else — a
// member, a stranger, the relay's own keys — is refused, whatever the
// page they use believes about who owns the relay.

// ownerViewRoutes are the routes the owner view reads.
func ownerViewRoutes(person string) []string {
	return []string{
		"/api/v1/status",
		"/api/v1/agent/memory",
		"/api/v1/agent/memory/" + snowclaw.NpubOf(person),
		"/api/v1/agent/items",
		"/api/v1/agent/stats",
		"/api/v1/agent/learning",
	}
}

func TestStatus_OwnerOnly(t *testing.T) {
	e := startAgentEnv(t)
	e.say(e.ac, e.alice, "the greenhouse pumps run at dawn")
	e.settle()
	stranger := newUser()
	for _, path := range ownerViewRoutes(e.alice.pk) {
		t.Run(path, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.httpURL(path), nil)
			if resp := do(t, req); resp.code != http.StatusUnauthorized || resp.header.Get("WWW-Authenticate") != "Nostr" {
				t.Fatalf("unsigned: %d %q", resp.code, resp.body)
			}
			// alice asks even for her own record: through this route it is the owner's
			for name, u := range map[string]user{"a member": e.alice, "a stranger": stranger, "the agent key": e.agent, "the relay key": e.relay} {
				code, msg := e.v1(&u, "GET", path, nil, nil)
				if code != http.StatusForbidden || !strings.HasPrefix(msg, "restricted:") {
					t.Fatalf("%s: %d %q, want 403 restricted", name, code, msg)
				}
			}
			if code, msg := e.v1(&e.owner, "GET", path, nil, nil); code != http.StatusOK {
				t.Fatalf("owner: %d %q", code, msg)
			}
		})
	}
	// a header the owner signed for one route opens no other
	req, _ := http.NewRequest("GET", e.httpURL("/api/v1/status"), nil)
	req.Header.Set("Authorization", e.nip98(e.owner, "GET", e.httpURL("/api/v1/agent/stats")))
	if resp := do(t, req); resp.code != http.StatusUnauthorized {
		t.Fatalf("the owner's signature for another route: %d %s", resp.code, resp.body)
	}
}

type statusReport struct {
	Version     string `json:"version"`
	Connections int    `json:"connections"`
	Disk        struct {
		FreeBytes    uint64 `json:"free_bytes"`
		ReserveBytes uint64 `json:"reserve_bytes"`
		Full         bool   `json:"full"`
		Error        string `json:"error"`
	} `json:"disk"`
	Index struct {
		Enabled    bool   `json:"enabled"`
		Status     string `json:"status"`
		Rebuilding bool   `json:"rebuilding"`
		Docs       int    `json:"docs"`
	} `json:"index"`
	Feed  *struct{} `json:"feed"`
	Agent struct {
		Enabled bool `json:"enabled"`
		Here    bool `json:"here"`
	} `json:"agent"`
	Remotes []struct {
		URL          string  `json:"url"`
		Trust        float64 `json:"trust"`
		State        string  `json:"state"`
		NIP50        *bool   `json:"nip50"`
		Requests     int     `json:"requests"`
		Failures     int     `json:"failures"`
		LastOK       int64   `json:"last_ok"`
		LastError    string  `json:"last_error"`
		LastErrorAt  int64   `json:"last_error_at"`
		RestingUntil int64   `json:"resting_until"`
	} `json:"remotes"`
}

// TestStatus_Report: the owner sees the disk, the whole index (every
// reader's documents, which health's per-reader count hides), the agent
// and each remote's health as its last request left it.
func TestStatus_Report(t *testing.T) {
	live := serveRemote(t, startEnv(t, withSearch).n.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "ws://" + ln.Addr().String()
	ln.Close() // nothing listens there: every request is refused at once
	e := startAgentEnv(t, withRemotes(5*time.Second, live.url, 0.8, dead, 0.5))

	var st statusReport
	if code, msg := e.v1(&e.owner, "GET", "/api/v1/status", nil, &st); code != 200 {
		t.Fatalf("status: %d %s", code, msg)
	}
	if len(st.Remotes) != 2 || st.Remotes[0].URL != live.url || st.Remotes[0].Trust != 0.8 || st.Remotes[1].URL != dead {
		t.Fatalf("remotes: %+v", st.Remotes)
	}
	for _, r := range st.Remotes {
		if r.State != "unasked" || r.Requests != 0 || r.NIP50 != nil {
			t.Fatalf("before any remote search: %+v", r)
		}
	}
	if st.Version != "test" || st.Disk.FreeBytes == 0 || st.Disk.Error != "" || st.Disk.Full || !st.Agent.Enabled || !st.Agent.Here || (st.Feed != nil) != overPostgres() {
		t.Fatalf("status: %+v", st)
	}
	if !st.Index.Enabled || st.Index.Status != "ready" || st.Index.Rebuilding {
		t.Fatalf("index: %+v", st.Index)
	}

	// a private memory of alice's: in the owner's total, not in bob's count
	if _, code, msg := e.storeText(&e.alice, snowclaw.StoreRequest{Text: "alice keeps bees on the roof", Tier: snowclaw.TierPrivate}); code != 201 {
		t.Fatalf("store: %d %s", code, msg)
	}
	docs := st.Index.Docs
	testwait.For(t, "the owner's index total to count alice's memory", func() bool {
		e.v1(&e.owner, "GET", "/api/v1/status", nil, &st)
		return st.Index.Docs > docs
	})
	var h struct {
		Counts map[string]int `json:"counts"`
	}
	if code, _ := e.v1(&e.bob, "GET", "/api/v1/health", nil, &h); code != 200 || h.Counts["index_docs"] >= st.Index.Docs {
		t.Fatalf("bob's health counts %v of the owner's %d documents", h.Counts, st.Index.Docs)
	}

	// one search asks both remotes: the live one answers, the dead one fails and rests
	before := time.Now().Unix()
	e.searchAPI(&e.owner, "greenhouse pumps", "&remote=1")
	if code, msg := e.v1(&e.owner, "GET", "/api/v1/status", nil, &st); code != 200 {
		t.Fatalf("status: %d %s", code, msg)
	}
	ok, failing := st.Remotes[0], st.Remotes[1]
	if ok.State != "ok" || ok.Requests != 1 || ok.Failures != 0 || ok.LastOK < before || ok.NIP50 == nil || !*ok.NIP50 || ok.LastError != "" {
		t.Fatalf("the live remote: %+v", ok)
	}
	if failing.State != "failing" || failing.Failures != 1 || failing.LastError == "" || failing.LastErrorAt < before ||
		failing.RestingUntil <= time.Now().Unix() || failing.LastOK != 0 {
		t.Fatalf("the dead remote: %+v", failing)
	}
}
