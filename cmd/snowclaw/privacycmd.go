package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// privacyCommands are privacy's commands (runPrivacy dispatches them; a
// test runs each).
var privacyCommands = []subcommand{
	{"export", "<npub> [--markdown]", "everything held about the person (JSON, or markdown)"},
	{"forget", "<npub> --id ID… | --topic PREFIX | --tag T… | --before YYYY-MM-DD | --query TEXT [--confirm TOKEN]", "a query first lists its matches and a token; run again with --confirm"},
	{"rectify", "<npub> ID|WORDS --text T", "correct a memory: a new version supersedes the old one"},
	{"promote", "<npub> ID|WORDS --tier group --group G | --tier public", "share a memory more widely (private → group → public)"},
	{"freeze", "<npub>", "stop new memories about the person"},
	{"unfreeze", "<npub>", "resume them"},
	{"destroy", "<npub> [--confirm TOKEN]", "remove everything about the person (asks for the token first)"},
	{"audit", "[npub]", "the audit trail (everyone's, or one person's)"},
}

var privacyUsage = subUsage("usage: snowclaw privacy <command> <npub> [flags] [--relay URL] [--sec OWNER_KEY]\n", privacyCommands,
	"The owner's key (--sec or $SNOWCLAW_SEC) signs each request (NIP-98).\n")

func runPrivacy(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("privacy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, privacyUsage) }
	client := ownerFlags(fs, environ)
	markdown := fs.Bool("markdown", false, "export as markdown")
	var ids, tags multiFlag
	fs.Var(&ids, "id", "event id to forget (repeatable)")
	fs.Var(&tags, "tag", "t tag to forget (repeatable)")
	topic := fs.String("topic", "", "topic (d tag) prefix to forget")
	before := fs.String("before", "", "forget memories written before this date (YYYY-MM-DD)")
	query := fs.String("query", "", "forget memories matching this query (lists them first)")
	confirm := fs.String("confirm", "", "confirmation token from a previous run")
	text := fs.String("text", "", "rectify: what the memory should say")
	tier := fs.String("tier", "", "promote: group or public")
	group := fs.String("group", "", "promote: the group to share with")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fmt.Fprint(stderr, privacyUsage)
		return errUsageShown
	}
	if isHelp(pos[0]) {
		fmt.Fprint(stdout, privacyUsage)
		return flag.ErrHelp
	}
	c, err := client()
	if err != nil {
		return err
	}
	npub := ""
	if len(pos) > 1 {
		npub = pos[1]
	} else if pos[0] != "audit" {
		return fmt.Errorf("privacy %s: name the person (npub)\n\n%s", pos[0], privacyUsage)
	}
	var out any
	switch pos[0] {
	case "export":
		path := "/api/v1/export?npub=" + url.QueryEscape(npub)
		if *markdown {
			var md string
			if err := c.callText(ctx, "GET", path+"&format=markdown", &md); err != nil {
				return err
			}
			fmt.Fprint(stdout, md)
			return nil
		}
		err = c.call(ctx, "GET", path, nil, &out)
	case "forget":
		body := map[string]any{"npub": npub, "ids": []string(ids), "tags": []string(tags), "topic": *topic, "before": *before, "query": *query, "token": *confirm}
		err = c.call(ctx, "POST", "/api/v1/privacy/forget", body, &out)
	case "rectify", "promote":
		if len(pos) < 3 {
			return fmt.Errorf("privacy %s: name the memory (id or words) after the npub\n\n%s", pos[0], privacyUsage)
		}
		body := map[string]string{"npub": npub, "id": strings.Join(pos[2:], " "), "text": *text, "tier": *tier, "group": *group}
		err = c.call(ctx, "POST", "/api/v1/privacy/"+pos[0], body, &out)
	case "freeze", "unfreeze":
		err = c.call(ctx, "POST", "/api/v1/privacy/"+pos[0], map[string]string{"npub": npub}, &out)
	case "destroy":
		err = c.call(ctx, "POST", "/api/v1/privacy/destroy", map[string]string{"npub": npub, "token": *confirm}, &out)
	case "audit":
		path := "/api/v1/privacy/audit"
		if npub != "" {
			path += "?npub=" + url.QueryEscape(npub)
		}
		err = c.call(ctx, "GET", path, nil, &out)
	default:
		return fmt.Errorf("privacy: unknown command %q\n\n%s", pos[0], privacyUsage)
	}
	if err != nil {
		return err
	}
	printJSON(stdout, out)
	if m, ok := out.(map[string]any); ok && m["preview"] == true {
		fmt.Fprintf(stderr, "nothing removed yet: run again with --confirm %v\n", m["token"])
	}
	return nil
}

// callText is call for a plain-text answer.
func (c *ownerClient) callText(ctx context.Context, method, path string, out *string) error {
	var raw rawText
	if err := c.call(ctx, method, path, nil, &raw); err != nil {
		return err
	}
	*out = strings.TrimSpace(string(raw)) + "\n"
	return nil
}

// rawText takes an answer as it is (call does not decode it).
type rawText []byte
