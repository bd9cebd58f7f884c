package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/relay"
)

// startServe runs a relay with the CLI's default config on dir, changed
// by mods, and returns its URL and a stop function (also run at cleanup).
func startServe(t *testing.T, dir, owner string, mods ...func(*Config)) (string, func()) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Data, cfg.Owner = dir, owner
	for _, m := range mods {
		m(&cfg)
	}
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := node.New(context.Background(), nodeOptions(cfg, keys, newLogger(&bytes.Buffer{}, "error")))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done; r.Close() }) }
	t.Cleanup(stop)
	return "ws://" + ln.Addr().String(), stop
}

func publishMemory(t *testing.T, url, sk string, tags nostr.Tags, content string) nostr.Event {
	t.Helper()
	c, err := wsclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	evt := nostr.Event{Kind: 30078, CreatedAt: nostr.Now(), Tags: tags, Content: content}
	evt.Sign(sk)
	if err := c.Publish(context.Background(), evt); err != nil {
		t.Fatal(err)
	}
	return evt
}

func TestSearchCmd_PrintsRankedHitsAndAuthenticates(t *testing.T) {
	ownerSK := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(ownerSK)
	dir := t.TempDir()
	url, _ := startServe(t, dir, ownerPK)
	keys, _ := relay.LoadKeys(dir, false)
	publishMemory(t, url, nostr.GeneratePrivateKey(), nostr.Tags{{"d", "snow:memory:ops/backup"}}, `{"summary":"nightly backups run at 02:00 with restic"}`)
	// the agent's record of a person is readable by the owner, not by all
	person, _ := nip19.EncodePublicKey(ownerPK)
	publishMemory(t, url, keys.AgentSecret, nostr.Tags{{"d", "snowclaw:memory:npub:" + person}}, `{"notes":["prefers the respond_mode all"]}`)

	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"search", "backups restic", "--relay", url, "--limit", "5"}, nil, &out, &errOut); err != nil {
		t.Fatalf("search: %v %s", err, errOut.String())
	}
	if !strings.Contains(out.String(), " 1. [kind 30078]") || !strings.Contains(out.String(), "nightly backups run at 02:00 with restic") {
		t.Fatalf("output:\n%s", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"search", "--explain", "backups", "--relay", url}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "bm25 rank 1") || !strings.Contains(out.String(), "passed bm25") || !strings.Contains(out.String(), "× trust") {
		t.Fatalf("--explain output:\n%s", out.String())
	}
	// anonymous search does not find the record; the owner's authenticated
	// search (--sec from SNOWCLAW_SEC, as an nsec) does
	out.Reset()
	run(context.Background(), []string{"search", "respond_mode", "--relay", url}, nil, &out, &errOut)
	if strings.Contains(out.String(), "respond_mode") {
		t.Fatalf("anonymous search saw the agent's record:\n%s", out.String())
	}
	nsec, _ := nip19.EncodePrivateKey(ownerSK)
	out.Reset()
	if err := run(context.Background(), []string{"search", "respond_mode", "--relay", url}, []string{"SNOWCLAW_SEC=" + nsec}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "respond_mode") {
		t.Fatalf("owner's search did not find the record:\n%s", out.String())
	}
}

// --explain names each result's origin: this relay, or the remote relay
// (a second relay, configured as [memory.remote]) and the trust its
// results get, which the final score includes. Without include:remote
// everything is local.
func TestSearchCmd_ExplainShowsOriginAndTrust(t *testing.T) {
	remoteURL, _ := startServe(t, t.TempDir(), "")
	url, _ := startServe(t, t.TempDir(), "", func(c *Config) {
		c.Memory.Remote.Relays = WeightMap{remoteURL: 0.5}
	})
	author := nostr.GeneratePrivateKey()
	local := publishMemory(t, url, author, nostr.Tags{{"d", "snow:memory:ops/ferry"}}, `{"summary":"the ferry timetable changes in winter"}`)
	far := publishMemory(t, remoteURL, author, nostr.Tags{{"d", "snow:memory:ops/ferry-far"}}, `{"summary":"the ferry timetable lists night crossings"}`)

	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"search", "ferry timetable include:remote", "--explain", "--relay", url}, nil, &out, &errOut); err != nil {
		t.Fatalf("search: %v %s", err, errOut.String())
	}
	hits := strings.Split(out.String(), "\n")
	origin := map[string]string{} // summary → its "from" line
	for i, l := range hits {
		for _, evt := range []nostr.Event{local, far} {
			if strings.Contains(l, snowclaw.DecodeMemory(evt.Content).Summary) && i+2 < len(hits) {
				origin[evt.ID] = hits[i+1] + "\n" + hits[i+2]
			}
		}
	}
	if o := origin[local.ID]; !strings.Contains(o, "from this relay (local)") || strings.Contains(o, "remote trust") {
		t.Fatalf("the local result's lines:\n%s\noutput:\n%s", o, out.String())
	}
	if o := origin[far.ID]; !strings.Contains(o, "from "+remoteURL+" (remote, trust 0.50)") || !strings.Contains(o, "× remote trust 0.50 =") {
		t.Fatalf("the remote result's lines:\n%s\noutput:\n%s", o, out.String())
	}

	out.Reset()
	if err := run(context.Background(), []string{"search", "ferry timetable", "--explain", "--relay", url}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "night crossings") || strings.Count(out.String(), "from this relay (local)") != 1 {
		t.Fatalf("a search without include:remote:\n%s", out.String())
	}
}

func TestReindexCmd_RebuildsFromEvents(t *testing.T) {
	dir := t.TempDir()
	url, stop := startServe(t, dir, "")
	publishMemory(t, url, nostr.GeneratePrivateKey(), nostr.Tags{{"d", "snow:memory:fact/owl"}}, "owls can rotate their heads 270 degrees")
	stop()
	os.RemoveAll(filepath.Join(dir, "search"))
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"reindex", "--data", dir}, nil, &out, &errOut); err != nil {
		t.Fatalf("reindex: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "reindexed 1 documents") {
		t.Fatalf("output: %q", out.String())
	}
	url, _ = startServe(t, dir, "")
	out.Reset()
	run(context.Background(), []string{"search", "owls rotate", "--relay", url}, nil, &out, &errOut)
	if !strings.Contains(out.String(), "owls can rotate") {
		t.Fatalf("after reindex: %s", out.String())
	}
}

// reindex against the data directory of a running relay is refused with a
// sentence saying what to do, not badger's lock error.
func TestReindexCmd_RefusesAStoreInUse(t *testing.T) {
	dir := t.TempDir()
	startServe(t, dir, "")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"reindex", "--data", dir}, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "is in use: stop the running relay first") {
		t.Fatalf("reindex on a running relay's data: %v", err)
	}
}

// TestReindexCmd_Owner: the owner given to reindex is a public key the
// sanitizer lets through, as on the running relay. Without it the owner's
// hex key in a memory is indexed shortened (a 64-hex string could be a
// secret) and a search for it misses, and reindex warns; with --owner
// (npub) it is found again. Progress and the warning share stderr as
// whole lines.
func TestReindexCmd_Owner(t *testing.T) {
	ownerSK := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(ownerSK)
	npub, _ := nip19.EncodePublicKey(ownerPK)
	dir := t.TempDir()
	url, stop := startServe(t, dir, ownerPK)
	publishMemory(t, url, nostr.GeneratePrivateKey(), nostr.Tags{{"d", "snow:memory:ops/escalation"}}, `{"summary":"when the backup fails page `+ownerPK+` at once"}`)
	stop()
	for _, tc := range []struct {
		args      []string
		found     bool
		stderrHas string
	}{
		{[]string{"reindex", "--data", dir}, false, "no owner given"},
		{[]string{"reindex", "--data", dir, "--owner", npub}, true, ""},
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), tc.args, nil, &out, &errOut); err != nil {
			t.Fatalf("%q: %v\n%s", tc.args, err, errOut.String())
		}
		if !strings.Contains(errOut.String(), tc.stderrHas) || (tc.stderrHas == "" && strings.Contains(errOut.String(), "no owner")) {
			t.Fatalf("%q: stderr %q, want %q", tc.args, errOut.String(), tc.stderrHas)
		}
		for _, line := range strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n") {
			if line != "" && !strings.HasPrefix(line, "reindex: ") && !strings.HasPrefix(line, "time=") || strings.ContainsAny(line, "\r\x1b") {
				t.Fatalf("%q: stderr line %q is neither a progress nor a log line", tc.args, line)
			}
		}
		url, stop := startServe(t, dir, ownerPK)
		out.Reset()
		if err := run(context.Background(), []string{"search", ownerPK, "--relay", url}, nil, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		stop()
		if strings.Contains(out.String(), "backup fails") != tc.found {
			t.Fatalf("%q: search for the owner's key after reindex (want found %v):\n%s", tc.args, tc.found, out.String())
		}
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"reindex", "--data", dir, "--owner", "npub1nope"}, nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "owner") {
		t.Fatalf("a bad --owner: err = %v, want one naming owner", err)
	}
}
