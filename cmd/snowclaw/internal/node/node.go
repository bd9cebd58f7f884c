// Package node assembles one Snowclaw relay process: it opens the event
// store, builds the relay over it, and shuts them down in reverse order.
// snowclaw serve, snowclaw eval and the end-to-end tests run a node, so
// that what is tested is what is served. snowclaw reindex does not: it
// opens only the store and the search index.
package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Options configure a node: the relay's, and with them the components
// the relay is built with (search, agent, groups, HTTP).
type Options struct {
	relay.Options
}

// Node is a running relay and the store under it.
type Node struct {
	store *store.Exact
	relay *relay.Relay
}

// New opens the store in o.DataDir and builds the relay over it.
func New(ctx context.Context, o Options) (*Node, error) {
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	// every reader and writer, plugins included, gets exact answers
	st, err := store.OpenBadger(filepath.Join(o.DataDir, "events"), o.Limits.MaxLimit)
	if err != nil {
		return nil, err
	}
	r, err := relay.New(ctx, st, o.Options)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &Node{store: st, relay: r}, nil
}

// Relay is the node's relay.
func (n *Node) Relay() *relay.Relay { return n.relay }

// Handler serves the relay's websocket and HTTP routes.
func (n *Node) Handler() http.Handler { return n.relay.Handler() }

// Serve accepts connections on ln until ctx is cancelled (relay.Serve).
func (n *Node) Serve(ctx context.Context, ln net.Listener) error { return n.relay.Serve(ctx, ln) }

// Close shuts down in the reverse order of New: the relay (its agent
// flushes through the store), then the store. Call it after Serve.
func (n *Node) Close() error {
	err := n.relay.Close()
	n.store.Close()
	return err
}
