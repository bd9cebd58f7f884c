package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/locomo"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// runEval is `snowclaw eval locomo --data FILE`: LoCoMo's retrieval
// metric (recall@5/10 and NDCG@10 of the evidence turns) measured against a
// real relay. Every dialogue
// turn is published over websocket as a group chat message (one NIP-29
// group per conversation, so a query only sees its own conversation) and
// every question is a NIP-50 REQ. It runs twice: BM25 alone, then the full
// ranking of the configuration.
func runEval(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "locomo" {
		return fmt.Errorf(`eval: the one benchmark is "locomo": snowclaw eval locomo --data FILE (a LoCoMo JSON file)`)
	}
	fs := flag.NewFlagSet("eval locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// no default: the data set is not part of the repository, and a path
	// guessed outside it would fail with a confusing "no such file"
	data := fs.String("data", "", "LoCoMo JSON file (required)")
	var fl serveFlags
	fs.StringVar(&fl.config, "config", "", "TOML config whose [search] and [memory] settings are evaluated")
	if err := fs.Parse(args[1:]); err != nil {
		return usageFailed(err)
	}
	if *data == "" {
		fs.Usage()
		return fmt.Errorf("eval locomo: --data FILE is required (a LoCoMo JSON file, e.g. locomo10.json from the LoCoMo release)")
	}
	convs, err := locomo.Load(*data)
	if err != nil {
		return err
	}
	cfg, err := resolveConfig(&fl, environ)
	if err != nil {
		return err
	}
	questions := 0
	for _, c := range convs {
		questions += len(c.Questions)
	}
	fmt.Fprintf(stdout, "LoCoMo: %d conversations, %d questions, embedder %s\n\n", len(convs), questions, cfg.Search.Embedder)
	for _, mode := range []struct {
		title string
		bm25  bool
	}{{"BM25 alone", true}, {"full ranking", false}} {
		start := time.Now()
		scores, err := evalOnRelay(ctx, cfg, convs, mode.bm25)
		if err != nil {
			return fmt.Errorf("%s: %w", mode.title, err)
		}
		scores.Write(stdout, fmt.Sprintf("%s (%s)", mode.title, time.Since(start).Round(time.Second)))
		fmt.Fprintln(stdout)
	}
	return nil
}

// evalOnRelay starts a relay on a fresh data directory and a random
// loopback port, publishes the conversations and scores the questions.
func evalOnRelay(ctx context.Context, cfg Config, convs []locomo.Conversation, bm25Only bool) (*locomo.Scores, error) {
	dir, err := os.MkdirTemp("", "snowclaw-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	owner := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(owner)
	cfg.Data, cfg.Owner = dir, ownerPK
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		return nil, err
	}
	opts := nodeOptions(cfg, keys, newLogger(io.Discard, "error"))
	opts.EventRateIP, opts.EventRatePubkey, opts.FilterRateIP = policies.Rate{}, policies.Rate{}, policies.Rate{}
	opts.Search.Enabled = true
	if bm25Only {
		opts.Search.Search.BM25Weight, opts.Search.Search.VectorWeight = 1, 0
	}
	n, err := node.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- n.Serve(sctx, ln) }()
	defer func() { stop(); <-served }()

	c, err := wsclient.Dial("ws://" + ln.Addr().String())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Auth(owner); err != nil {
		return nil, err
	}
	var scores locomo.Scores
	for _, conv := range convs {
		docOf, err := publishConversation(ctx, c, owner, conv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", conv.SampleID, err)
		}
		for _, q := range conv.Questions {
			evs, closed, err := c.Fetch(nostr.Filter{Search: q.Text, Tags: nostr.TagMap{"h": {conv.SampleID}}, Limit: 10}, 30*time.Second)
			if err != nil {
				return nil, err
			}
			if closed != "" {
				return nil, errors.New("search refused: " + closed)
			}
			ranked := make([]string, 0, len(evs))
			for _, e := range evs {
				ranked = append(ranked, docOf[e.ID])
			}
			scores.Add(q.Category, ranked, q.Gold)
		}
	}
	return &scores, nil
}

// publishConversation makes the conversation's group and publishes its
// turns in order, dated as in the data; it returns event id → turn id.
func publishConversation(ctx context.Context, c *wsclient.Client, sk string, conv locomo.Conversation) (map[string]string, error) {
	create := nostr.Event{Kind: 9007, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", conv.SampleID}}}
	create.Sign(sk)
	if err := c.Publish(ctx, create); err != nil {
		return nil, fmt.Errorf("creating group: %w", err)
	}
	docOf := make(map[string]string, len(conv.Turns))
	for _, t := range conv.Turns {
		evt := nostr.Event{Kind: 9, CreatedAt: nostr.Timestamp(t.At), Tags: nostr.Tags{{"h", conv.SampleID}}, Content: t.Speaker + ": " + t.Text}
		evt.Sign(sk)
		if err := c.Publish(ctx, evt); err != nil {
			return nil, fmt.Errorf("turn %s: %w", t.DiaID, err)
		}
		docOf[evt.ID] = locomo.DocID(conv.SampleID, t.DiaID)
	}
	return docOf, nil
}
