package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// memoryCommands are memory's commands (runMemory dispatches them; a
// test runs each).
var memoryCommands = []subcommand{
	{"get", "<npub|group:ID>", "what the agent holds about a person or group"},
	{"set", "<npub> [--note TEXT] [--pref k=v]…", "add an owner note or set a preference"},
	{"list", "", "every person and group with a record"},
	{"items", "", "the long-term memory items"},
	{"delete", "<npub|group:ID|item:ID>", "delete a record or an item (and its event)"},
	{"flush", "", "write every pending change to the relay now"},
	{"compact", "[--max N]", "consolidate: merge duplicates (kept as history),\narchive what is over the per-scope cap, write\nthe weekly summaries that are due"},
	{"restore", "<event-id>", "bring back an archived, merged or superseded memory"},
	{"status", "", "what learning from conversation is doing"},
	{"context", "<npub|group:ID>", "the memory ids recalled into the last prompt"},
	{"lessons", "list|enable ID|disable ID|delete ID", "the lessons the agent follows"},
}

var memoryUsage = subUsage("usage: snowclaw memory <command> [--relay URL] [--sec OWNER_KEY]\n", memoryCommands,
	"The owner's key (--sec or $SNOWCLAW_SEC) signs each request (NIP-98).\n")

// parseInterleaved parses flags that may come before or after positional
// arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageFailed(err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runMemory(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, memoryUsage) }
	client := ownerFlags(fs, environ)
	note := fs.String("note", "", "owner note to add (set)")
	var prefs multiFlag
	fs.Var(&prefs, "pref", "preference key=value (set; repeatable; empty value deletes)")
	max := fs.Int("max", 0, "item cap for compact (default: the relay's memory cap)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		fmt.Fprint(stderr, memoryUsage)
		return errUsageShown
	}
	if isHelp(pos[0]) {
		fmt.Fprint(stdout, memoryUsage)
		return flag.ErrHelp
	}
	c, err := client()
	if err != nil {
		return err
	}
	arg := func(i int, what string) (string, error) {
		if len(pos) <= i {
			return "", fmt.Errorf("memory %s: missing %s\n\n%s", pos[0], what, memoryUsage)
		}
		return pos[i], nil
	}
	var out any
	switch pos[0] {
	case "get":
		s, err := arg(1, "<npub|group:ID>")
		if err != nil {
			return err
		}
		err = c.call(ctx, "GET", "/api/v1/agent/memory/"+url.PathEscape(s), nil, &out)
		if err != nil {
			return err
		}
	case "set":
		s, err := arg(1, "<npub>")
		if err != nil {
			return err
		}
		body := map[string]any{}
		if *note != "" {
			body["note"] = *note
		}
		if len(prefs) > 0 {
			m := map[string]string{}
			for _, p := range prefs {
				k, v, ok := strings.Cut(p, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("--pref %q: want key=value", p)
				}
				m[strings.TrimSpace(k)] = v
			}
			body["prefs"] = m
		}
		if len(body) == 0 {
			return fmt.Errorf("memory set: give --note TEXT and/or --pref key=value")
		}
		if err := c.call(ctx, "POST", "/api/v1/agent/memory/"+url.PathEscape(s), body, &out); err != nil {
			return err
		}
	case "list":
		if err := c.call(ctx, "GET", "/api/v1/agent/memory", nil, &out); err != nil {
			return err
		}
	case "items":
		if err := c.call(ctx, "GET", "/api/v1/agent/items", nil, &out); err != nil {
			return err
		}
	case "delete":
		s, err := arg(1, "<npub|group:ID|item:ID>")
		if err != nil {
			return err
		}
		path := "/api/v1/agent/memory/" + url.PathEscape(s)
		if id, ok := strings.CutPrefix(s, "item:"); ok {
			path = "/api/v1/agent/items/" + url.PathEscape(id)
		}
		if err := c.call(ctx, "DELETE", path, nil, &out); err != nil {
			return err
		}
	case "flush":
		if err := c.call(ctx, "POST", "/api/v1/agent/flush", nil, &out); err != nil {
			return err
		}
	case "compact":
		if err := c.call(ctx, "POST", "/api/v1/agent/compact", map[string]int{"max": *max}, &out); err != nil {
			return err
		}
	case "restore":
		id, err := arg(1, "<event-id>")
		if err != nil {
			return err
		}
		if err := c.call(ctx, "POST", "/api/v1/agent/restore/"+url.PathEscape(id), nil, &out); err != nil {
			return err
		}
	case "status":
		if err := c.call(ctx, "GET", "/api/v1/agent/learning", nil, &out); err != nil {
			return err
		}
	case "context":
		s, err := arg(1, "<npub|group:ID>")
		if err != nil {
			return err
		}
		if err := c.call(ctx, "GET", "/api/v1/agent/context/"+url.PathEscape(s), nil, &out); err != nil {
			return err
		}
	case "lessons":
		return runLessons(ctx, c, pos[1:], stdout)
	default:
		return fmt.Errorf("memory: unknown command %q\n\n%s", pos[0], memoryUsage)
	}
	printJSON(stdout, out)
	return nil
}

func runLessons(ctx context.Context, c *ownerClient, pos []string, stdout io.Writer) error {
	if len(pos) == 0 || pos[0] == "list" {
		var out []map[string]any
		if err := c.call(ctx, "GET", "/api/v1/agent/lessons", nil, &out); err != nil {
			return err
		}
		if len(out) == 0 {
			fmt.Fprintln(stdout, "no lessons")
			return nil
		}
		for _, l := range out {
			b, _ := json.Marshal(l)
			fmt.Fprintln(stdout, string(b))
		}
		return nil
	}
	if len(pos) < 2 {
		return fmt.Errorf("memory lessons %s: give the lesson id", pos[0])
	}
	path := "/api/v1/agent/lessons/" + url.PathEscape(pos[1])
	var out any
	var err error
	switch pos[0] {
	case "enable", "disable":
		err = c.call(ctx, "POST", path, map[string]bool{"enabled": pos[0] == "enable"}, &out)
	case "delete":
		err = c.call(ctx, "DELETE", path, nil, &out)
	default:
		return fmt.Errorf("memory lessons: unknown command %q (list, enable, disable, delete)", pos[0])
	}
	if err != nil {
		return err
	}
	printJSON(stdout, out)
	return nil
}
