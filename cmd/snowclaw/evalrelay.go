package main

import (
	"context"
	"io"
	"net"
	"os"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// evalRelay is a relay an eval runs against: a fresh data directory, a
// random loopback port, and a websocket client authenticated as the owner.
type evalRelay struct {
	client *wsclient.Client
	owner  string // the owner's secret key
	close  func()
}

// startEvalRelay starts cfg's relay with every key derived from keyOf and
// no rate limits; bm25Only turns the vector side off (BM25 alone).
func startEvalRelay(ctx context.Context, cfg Config, keyOf evalKeys, bm25Only bool) (_ *evalRelay, err error) {
	var undo []func()
	closeAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	dir, err := os.MkdirTemp("", "snowclaw-eval-")
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { os.RemoveAll(dir) })
	owner := keyOf.secret("owner")
	ownerPK, _ := nostr.GetPublicKey(owner)
	cfg.Data, cfg.Owner = dir, ownerPK
	keys := relay.Keys{RelaySecret: keyOf.secret("relay"), AgentSecret: keyOf.secret("agent")}
	opts := nodeOptions(cfg, keys, newLogger(io.Discard, "error"))
	opts.EventRateIP, opts.EventRatePubkey, opts.FilterRateIP = policies.Rate{}, policies.Rate{}, policies.Rate{}
	// the conversations keep their dates, as a group's history copied
	// in from another relay does (NIP-29 late publication lifted)
	opts.AcceptMovedGroups = true
	opts.Search.Enabled = true
	if bm25Only {
		opts.Search.Search.BM25Weight, opts.Search.Search.VectorWeight = 1, 0
	}
	n, err := node.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { n.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- n.Serve(sctx, ln) }()
	undo = append(undo, func() { stop(); <-served })
	c, err := wsclient.Dial("ws://" + ln.Addr().String())
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { c.Close() })
	if err := c.Auth(owner); err != nil {
		return nil, err
	}
	return &evalRelay{client: c, owner: owner, close: closeAll}, nil
}
