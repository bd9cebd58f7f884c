package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// configCommands are config's commands.
var configCommands = []subcommand{
	{"get", "<scope>", "the scope's own setting and the settings in force there"},
	{"set", "<scope> key=value…", "respond_mode=all|mention|owner|none, context_history=N"},
}

var configUsage = subUsage("usage: snowclaw config <command> <global|group:ID|npub:X> [key=value…] [--relay URL] [--sec OWNER_KEY]\n", configCommands,
	`set publishes an owner-signed snowclaw:config:* event (kind 30078); the
agent applies it at once. The owner's key comes from --sec or $SNOWCLAW_SEC.
`)

func runConfig(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, configUsage) }
	client := ownerFlags(fs, environ)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 && isHelp(pos[0]) {
		fmt.Fprint(stdout, configUsage)
		return flag.ErrHelp
	}
	if len(pos) < 2 || (pos[0] != "get" && pos[0] != "set") {
		fmt.Fprint(stderr, configUsage)
		return errUsageShown
	}
	scope, err := dynconfig.ParseScope(pos[1])
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	c, err := client()
	if err != nil {
		return err
	}
	path := "/api/v1/agent/config/" + url.PathEscape(scope.String())
	if pos[0] == "get" {
		var out any
		if err := c.call(ctx, "GET", path, nil, &out); err != nil {
			return err
		}
		printJSON(stdout, out)
		return nil
	}
	change, err := dynconfig.ParseAssignments(pos[2:])
	if err != nil {
		return fmt.Errorf("config set: %w", err)
	}
	// the event replaces the scope's whole setting: keep the keys not
	// being changed
	var cur struct {
		Set dynconfig.Patch `json:"set"`
	}
	if err := c.call(ctx, "GET", path, nil, &cur); err != nil {
		return err
	}
	merged := cur.Set
	if change.RespondMode != "" {
		merged.RespondMode = change.RespondMode
	}
	if change.ContextHistory != 0 {
		merged.ContextHistory = change.ContextHistory
	}
	ws, err := wsclient.Dial(c.relay)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.relay, err)
	}
	defer ws.Close()
	if err := ws.Auth(c.sk); err != nil {
		return fmt.Errorf("authenticating to %s: %w", c.relay, err)
	}
	// a new version must be strictly newer than the stored one, or the
	// relay keeps the old (two sets within a second)
	stamp := nostr.Now()
	pk, _ := nostr.GetPublicKey(c.sk)
	prev, _, err := ws.Fetch(nostr.Filter{Kinds: []int{30078}, Authors: []string{pk}, Tags: nostr.TagMap{"d": {scope.DTag()}}}, 10*time.Second)
	if err != nil {
		return fmt.Errorf("reading the current config: %w", err)
	}
	var newest *nostr.Event
	for _, p := range prev {
		stamp = max(stamp, p.CreatedAt+1)
		if newest == nil || p.CreatedAt > newest.CreatedAt {
			newest = p
		}
	}
	evt := merged.Event(scope, stamp)
	if newest != nil {
		evt.Content = keepOtherKeys(newest.Content, evt.Content)
	}
	if err := evt.Sign(c.sk); err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := ws.Publish(pctx, evt); err != nil {
		return fmt.Errorf("relay refused the config event: %w", err)
	}
	fmt.Fprintf(stdout, "published %s (%s)\n", evt.Tags.GetD(), evt.Content)
	return nil
}

// keepOtherKeys carries over the keys of the stored config that the agent's
// settings do not cover (the trust list source_preference, keys of newer
// versions), so that setting one key never drops another.
func keepOtherKeys(stored, next string) string {
	var old, cur map[string]json.RawMessage
	if json.Unmarshal([]byte(stored), &old) != nil || json.Unmarshal([]byte(next), &cur) != nil {
		return next
	}
	for k, v := range old {
		if _, set := cur[k]; !set {
			cur[k] = v
		}
	}
	out, err := json.Marshal(cur)
	if err != nil {
		return next
	}
	return string(out)
}
