package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/snowclaw/snowclaw/internal/testwait"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

type key struct{ sk, pk, nsec, npub string }

func newKey() key {
	sk := nostr.GeneratePrivateKey()
	pk, _ := nostr.GetPublicKey(sk)
	nsec, _ := nip19.EncodePrivateKey(sk)
	npub, _ := nip19.EncodePublicKey(pk)
	return key{sk, pk, nsec, npub}
}

func signed(k key, kind int, tags nostr.Tags, content string) nostr.Event {
	evt := nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: tags, Content: content}
	evt.Sign(k.sk)
	return evt
}

// cli runs one snowclaw command in-process against a relay, as the user
// would from a shell.
func cli(t *testing.T, environ []string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, environ, &out, &errb)
	return out.String() + errb.String(), err
}

func authed(t *testing.T, url string, k key) *wsclient.Client {
	t.Helper()
	c, err := wsclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Auth(k.sk); err != nil {
		t.Fatal(err)
	}
	return c
}

func publishOK(t *testing.T, c *wsclient.Client, evt nostr.Event) {
	t.Helper()
	if err := c.Publish(context.Background(), evt); err != nil {
		t.Fatalf("publish kind %d: %v", evt.Kind, err)
	}
}

// TestProcess_RememberSurvivesKillNine: an explicit "remember that …" is
// on the relay before the agent handles the next message, so a SIGKILL
// right after loses nothing; after the restart the agent has it in RAM
// (asked through the owner's CLI). The ordinary flush interval is an hour,
// so only the immediate flush can have saved it.
func TestProcess_RememberSurvivesKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	owner, alice := newKey(), newKey()
	data := t.TempDir()
	t.Setenv("SNOWCLAW_AGENT_FLUSH_INTERVAL", "1h")
	c := startChild(t, data, "--owner", owner.npub)

	oc, ac := authed(t, c.url, owner), authed(t, c.url, alice)
	publishOK(t, oc, signed(owner, 9007, nostr.Tags{{"h", "crew"}}, ""))
	publishOK(t, ac, signed(alice, 9021, nostr.Tags{{"h", "crew"}}, ""))
	publishOK(t, ac, signed(alice, 9, nostr.Tags{{"h", "crew"}}, "@Snowclaw remember that the launch code word is pelican"))

	var agentPK string
	if !testwait.Until(testwait.DefaultTimeout, func() bool {
		evs, _, _ := ac.Fetch(nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"h": {"crew"}}}, 5*time.Second)
		for _, e := range evs {
			if strings.Contains(e.Content, "pelican") && strings.HasPrefix(e.Tags.GetD(), "snow:memory:group/crew/") {
				agentPK = e.PubKey
			}
		}
		return agentPK != ""
	}) {
		t.Fatalf("the remembered item never reached the relay; stderr:\n%s", c.log)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()

	c2 := startChild(t, data, "--owner", owner.npub)
	env := []string{"SNOWCLAW_SEC=" + owner.nsec}
	out, err := cli(t, env, "memory", "items", "--relay", c2.url)
	if err != nil || !strings.Contains(out, "pelican") {
		t.Fatalf("memory items after kill -9: %v\n%s", err, out)
	}
	out, err = cli(t, env, "memory", "get", "group:crew", "--relay", c2.url)
	if err != nil || !strings.Contains(out, "pelican") {
		t.Fatalf("memory get group:crew: %v\n%s", err, out)
	}
}

// TestCLI_MemoryAndConfig drives the owner's commands against a running
// relay: notes and preferences, listing, lessons, config set/get applied
// live, and refusal of anyone but the owner.
func TestCLI_MemoryAndConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	owner, alice, mallory := newKey(), newKey(), newKey()
	c := startChild(t, t.TempDir(), "--owner", owner.npub)
	env := []string{"SNOWCLAW_SEC=" + owner.nsec}
	oc := authed(t, c.url, owner)
	publishOK(t, oc, signed(owner, 9007, nostr.Tags{{"h", "ops"}}, ""))

	out, err := cli(t, env, "memory", "set", alice.npub, "--note", "prefers short answers", "--pref", "language=fr", "--relay", c.url)
	if err != nil {
		t.Fatalf("memory set: %v\n%s", err, out)
	}
	out, err = cli(t, env, "memory", "get", alice.npub, "--relay", c.url)
	if err != nil || !strings.Contains(out, "prefers short answers") || !strings.Contains(out, `"language": "fr"`) {
		t.Fatalf("memory get: %v\n%s", err, out)
	}
	out, err = cli(t, env, "memory", "list", "--relay", c.url)
	if err != nil || !strings.Contains(out, alice.npub) {
		t.Fatalf("memory list: %v\n%s", err, out)
	}
	// the record is on the relay, encrypted to alice: she can read it
	ac := authed(t, c.url, alice)
	var rec *nostr.Event
	testwait.For(t, "alice's person record on the relay", func() bool {
		evs, _, _ := ac.Fetch(nostr.Filter{Kinds: []int{30078}, Tags: nostr.TagMap{"d": {"snowclaw:memory:npub:" + alice.npub}}}, 5*time.Second)
		if len(evs) > 0 {
			rec = evs[0]
		}
		return rec != nil
	})
	if strings.Contains(rec.Content, "prefers short answers") {
		t.Fatalf("person record stored in plaintext: %v", rec)
	}

	out, err = cli(t, env, "memory", "lessons", "list", "--relay", c.url)
	if err != nil || !strings.Contains(out, "no lessons") {
		t.Fatalf("lessons list: %v\n%s", err, out)
	}
	// the relay may come from the environment instead of --relay
	if out, err = cli(t, append(slices.Clone(env), "SNOWCLAW_RELAY="+c.url), "memory", "lessons", "list"); err != nil || !strings.Contains(out, "no lessons") {
		t.Fatalf("lessons list with $SNOWCLAW_RELAY: %v\n%s", err, out)
	}
	if out, err = cli(t, env, "memory", "flush", "--relay", c.url); err != nil {
		t.Fatalf("memory flush: %v\n%s", err, out)
	}
	if out, err = cli(t, env, "memory", "compact", "--max", "10", "--relay", c.url); err != nil {
		t.Fatalf("memory compact: %v\n%s", err, out)
	}

	out, err = cli(t, env, "config", "set", "group:ops", "respond_mode=all", "context_history=5", "--relay", c.url)
	if err != nil {
		t.Fatalf("config set: %v\n%s", err, out)
	}
	var view struct {
		Effective struct {
			RespondMode    string `json:"respond_mode"`
			ContextHistory int    `json:"context_history"`
		}
	}
	testwait.For(t, "config get to show respond_mode=all", func() bool {
		out, err = cli(t, env, "config", "get", "group:ops", "--relay", c.url)
		if err != nil {
			t.Fatalf("config get: %v\n%s", err, out)
		}
		json.Unmarshal([]byte(out), &view)
		return view.Effective.RespondMode == "all"
	})
	if view.Effective.ContextHistory != 5 || !strings.Contains(out, `"respond_mode": "all"`) {
		t.Fatalf("config get after set: %s", out)
	}
	// the scope's own setting and the settings in force are spelled alike,
	// as config set takes them
	var keys struct{ Set, Effective map[string]any }
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatalf("config get: %v\n%s", err, out)
	}
	for part, m := range map[string]map[string]any{"set": keys.Set, "effective": keys.Effective} {
		if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, []string{"context_history", "respond_mode"}) {
			t.Errorf("config get: %s has the keys %v, want context_history and respond_mode\n%s", part, got, out)
		}
	}
	// a second set keeps the key it does not change
	if out, err = cli(t, env, "config", "set", "group:ops", "respond_mode=none", "--relay", c.url); err != nil {
		t.Fatalf("config set: %v\n%s", err, out)
	}
	testwait.For(t, "config get to show respond_mode=none", func() bool {
		out, _ = cli(t, env, "config", "get", "group:ops", "--relay", c.url)
		json.Unmarshal([]byte(out), &view)
		return view.Effective.RespondMode == "none"
	})
	if view.Effective.ContextHistory != 5 {
		t.Fatalf("config get after second set: %s", out)
	}
	// keys the CLI does not know, like the UI's trust list, survive a set
	publishOK(t, oc, signed(owner, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, `{"respond_mode":"mention","source_preference":["`+alice.npub+`"]}`))
	if out, err = cli(t, env, "config", "set", "global", "context_history=7", "--relay", c.url); err != nil {
		t.Fatalf("config set global: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"source_preference":["`+alice.npub+`"]`) || !strings.Contains(out, `"context_history":7`) {
		t.Fatalf("config set dropped a key: %s", out)
	}

	// the owner exercises alice's rights for her: a correction and a
	// promotion of what she asked the agent to remember in the group
	publishOK(t, ac, signed(alice, 9021, nostr.Tags{{"h", "ops"}}, ""))
	publishOK(t, ac, signed(alice, 9, nostr.Tags{{"h", "ops"}}, "@Snowclaw remember that the ops pager rotates on mondays"))
	testwait.For(t, "the agent to remember the pager rotation", func() bool {
		out, _ = cli(t, env, "memory", "items", "--relay", c.url)
		return strings.Contains(out, "rotates on mondays")
	})
	out, err = cli(t, env, "privacy", "rectify", alice.npub, "pager rotates", "--text", "the ops pager rotates on fridays", "--relay", c.url)
	if err != nil || !strings.Contains(out, `"version": 2`) || !strings.Contains(out, "fridays") {
		t.Fatalf("privacy rectify: %v\n%s", err, out)
	}
	out, err = cli(t, env, "privacy", "promote", alice.npub, "pager", "--tier", "public", "--relay", c.url)
	if err != nil || !strings.Contains(out, `"tier": "public"`) {
		t.Fatalf("privacy promote: %v\n%s", err, out)
	}
	out, _ = cli(t, env, "memory", "items", "--relay", c.url)
	if !strings.Contains(out, "fridays") || strings.Contains(out, "mondays") {
		t.Fatalf("agent items after rectify and promote:\n%s", out)
	}

	out, err = cli(t, env, "privacy", "export", alice.npub, "--relay", c.url)
	if err != nil || !strings.Contains(out, "prefers short answers") || !strings.Contains(out, `"export_version": "1.0"`) {
		t.Fatalf("privacy export: %v\n%s", err, out)
	}
	if out, err = cli(t, env, "privacy", "freeze", alice.npub, "--relay", c.url); err != nil {
		t.Fatalf("privacy freeze: %v\n%s", err, out)
	}
	out, err = cli(t, env, "privacy", "destroy", alice.npub, "--relay", c.url)
	var preview struct{ Token string }
	if json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &preview); err != nil || preview.Token == "" {
		t.Fatalf("privacy destroy preview: %v\n%s", err, out)
	}
	if out, err = cli(t, env, "privacy", "destroy", alice.npub, "--confirm", preview.Token, "--relay", c.url); err != nil {
		t.Fatalf("privacy destroy: %v\n%s", err, out)
	}
	if out, err = cli(t, env, "memory", "get", alice.npub, "--relay", c.url); err == nil {
		t.Fatalf("alice's record survived destroy:\n%s", out)
	}
	out, err = cli(t, env, "privacy", "audit", "--relay", c.url)
	for _, op := range []string{`"export"`, `"rectify"`, `"promote"`, `"freeze"`, `"destroy"`} {
		if err != nil || !strings.Contains(out, op) {
			t.Fatalf("privacy audit lacks %s: %v\n%s", op, err, out)
		}
	}

	// anyone else is refused, over the API and over the relay
	bad := []string{"SNOWCLAW_SEC=" + mallory.nsec}
	if out, err := cli(t, bad, "memory", "get", alice.npub, "--relay", c.url); err == nil || !strings.Contains(out+err.Error(), "restricted:") {
		t.Fatalf("non-owner memory get: %v\n%s", err, out)
	}
	if out, err := cli(t, bad, "config", "set", "global", "respond_mode=all", "--relay", c.url); err == nil {
		t.Fatalf("non-owner config set accepted:\n%s", out)
	}
	if out, err := cli(t, nil, "memory", "list", "--relay", c.url); err == nil || !strings.Contains(err.Error(), "owner's key") {
		t.Fatalf("memory list without a key: %v\n%s", err, out)
	}
}
