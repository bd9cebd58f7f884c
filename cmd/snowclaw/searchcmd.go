package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/groupread"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/search"
)

// runSearch is a NIP-50 client: it sends the query to a running relay over
// websocket (authenticating when given a key) and prints the ranked hits.
func runSearch(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := relayFlag(fs, environ, "relay URL")
	sec := fs.String("sec", "", "nsec or hex secret to authenticate with (default $SNOWCLAW_SEC)")
	limit := fs.Int("limit", 10, "number of results")
	asJSON := fs.Bool("json", false, "print the events as JSON lines")
	explain := fs.Bool("explain", false, "print each result's score breakdown (BM25 rank, vector rank, fused, trust, final) and where it came from (this relay, or a remote relay and its trust, with include:remote)")
	// flags may follow the query
	var query []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return usageFailed(err)
		}
		if fs.NArg() == 0 {
			break
		}
		query = append(query, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(query) == 0 {
		return fmt.Errorf(`search: give a query, e.g. snowclaw search "deploy friday" --limit 5`)
	}
	// parsed here to set the flag on the query, not after it: appended
	// text would land inside a quote the query left open
	q, err := snowclaw.ParseSearch(strings.Join(query, " "))
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	q.Explain = q.Explain || *explain
	if *sec == "" {
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, "SNOWCLAW_SEC="); ok {
				*sec = v
			}
		}
	}
	c, err := wsclient.Dial(*url)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", *url, err)
	}
	defer c.Close()
	if *sec != "" {
		sk, err := snowclaw.ParseSecret(*sec)
		if err != nil {
			return fmt.Errorf("--sec: %w", err)
		}
		if err := c.Auth(sk); err != nil {
			return fmt.Errorf("authenticating to %s: %w", *url, err)
		}
	}
	events, closed, err := c.Fetch(nostr.Filter{Search: q.String(), Limit: *limit}, 30*time.Second)
	if err != nil {
		return err
	}
	if closed != "" {
		return fmt.Errorf("relay refused the search: %s", closed)
	}
	if len(events) == 0 {
		fmt.Fprintln(stdout, "no results")
		return nil
	}
	breakdown := explainRows(c.Notices())
	shown := groupread.Printer(ctx, *url, *sec, groupread.Over(c, 30*time.Second))
	for i, evt := range events {
		if *asJSON {
			b, _ := json.Marshal(evt)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		printHit(stdout, i+1, shown(evt))
		if e, ok := breakdown[evt.ID]; ok {
			fmt.Fprintf(stdout, "    passed %s  bm25 rank %d (%.3f)  vector rank %d (%.3f, floor %.3f)  fused %.4f  × trust %.2f × confidence %.2f × recency %.2f%s = %.4f\n",
				floorName(e.Floor), e.BM25Rank, e.BM25Score, e.VectorRank, e.VectorScore, e.VectorFloor, e.Fused, e.Trust, e.Confidence, e.Recency, remoteFactor(e), e.Final)
			fmt.Fprintf(stdout, "    from %s\n", originName(e))
		}
	}
	if *explain && len(breakdown) == 0 {
		fmt.Fprintln(stderr, "the relay sent no score breakdown (an older relay?)")
	}
	return nil
}

// originName says where a result came from: this relay, or a remote
// relay of a search with include:remote and the trust its results get.
func originName(e snowclaw.ExplainRow) string {
	if e.Origin == "" || e.Origin == snowclaw.OriginLocal {
		return "this relay (local)"
	}
	return fmt.Sprintf("%s (remote, trust %.2f)", e.Origin, e.RemoteTrust)
}

// remoteFactor is the remote trust in the product that made Final.
func remoteFactor(e snowclaw.ExplainRow) string {
	if e.Origin == "" || e.Origin == snowclaw.OriginLocal {
		return ""
	}
	return fmt.Sprintf(" × remote trust %.2f", e.RemoteTrust)
}

// floorName says which relevance floor a result passed, in words.
func floorName(f string) string {
	switch f {
	case search.FloorVector:
		return "vector ≥ floor"
	case search.FloorBoth:
		return "bm25 and vector ≥ floor"
	case search.FloorContext:
		return "context (a neighbour matched)"
	case "":
		return "no floor (browse)"
	}
	return f
}

// explainRows reads the relay's explain notice (see relay/conn.go).
func explainRows(notices []string) map[string]snowclaw.ExplainRow {
	out := make(map[string]snowclaw.ExplainRow)
	for _, n := range notices {
		var body struct {
			Explain string                `json:"explain"`
			Results []snowclaw.ExplainRow `json:"results"`
		}
		if json.Unmarshal([]byte(n), &body) == nil && body.Explain != "" {
			for _, r := range body.Results {
				out[r.ID] = r
			}
		}
	}
	return out
}

func printHit(w io.Writer, rank int, evt *nostr.Event) {
	npub := snowclaw.NpubOf(evt.PubKey)
	if len(npub) > 16 {
		npub = npub[:12] + "…" + npub[len(npub)-4:]
	}
	e := snowclaw.ReadEvent(evt)
	where := e.D
	if g := e.Group; g != "" {
		where = strings.TrimSpace(where + " #" + g)
	}
	text := evt.Content
	if m := snowclaw.DecodeMemory(text); m.HasSummary() {
		text = m.Summary
	}
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 160 {
		text = text[:157] + "…"
	}
	fmt.Fprintf(w, "%2d. [kind %d] %s %s %s\n    %s\n", rank, evt.Kind, evt.CreatedAt.Time().UTC().Format("2006-01-02"), npub, where, text)
}
