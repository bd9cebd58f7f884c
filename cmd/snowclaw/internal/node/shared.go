package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snowclaw/snowclaw/internal/leader"
	"github.com/snowclaw/snowclaw/plugins/rights"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/relay/store/postgres"
)

// Over a shared store (PostgreSQL) several nodes are one relay. Each of
// them follows the store's change log (relay.FollowPeers) and keeps its
// own index current from it (memsearch's recorded position); the agent
// runs on one node at a time, the leader, elected with an advisory lock
// (internal/leader). The others keep theirs in standby.

// catchUpWindow is how far back a new leader looks for unanswered
// messages: a leader that died mid-reply (replies take up to the reply
// timeout) and the seconds without a leader.
const catchUpWindow = 10 * time.Minute

// shared is the node's part in a group of nodes.
type shared struct {
	stop    context.CancelFunc
	done    sync.WaitGroup
	leading atomic.Bool
}

// startShared starts following the other nodes' changes and, with an
// agent, the election of the node that runs it.
func (n *Node) startShared() {
	n.relay.FollowPeers()
	if n.agent == nil || n.o.PostgresURL == "" {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	n.shared = &shared{stop: stop}
	n.shared.done.Add(1)
	go func() {
		defer n.shared.done.Done()
		leader.Run(ctx, leader.Options{URL: n.o.PostgresURL, Position: n.relay.FeedPosition, Name: n.o.InstanceID, Logger: n.o.Logger}, n.lead)
	}()
}

// lead runs the agent while this node leads: started from the stored
// records (and the messages nobody answered), paused — flushed, its
// replies in flight given up — when the lead is lost or the node closes.
func (n *Node) lead(ctx context.Context, prev leader.Previous) {
	handled, err := n.receivedBy(ctx, prev)
	if err != nil {
		n.o.Logger.Error("agent: reading what the previous leader received; another node may take over", "err", err)
		return
	}
	if err := n.agent.StartAfter(ctx, handled); err != nil {
		n.o.Logger.Error("agent: could not start as the leader; another node may take over", "err", err)
		return
	}
	n.shared.leading.Store(true)
	n.crypt.Start(ctx) // group keys for what changed without a leader
	<-ctx.Done()
	n.shared.leading.Store(false)
	pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.agent.Pause(pctx); err != nil {
		n.o.Logger.Warn("agent: flushing its records on stepping down", "err", err)
	}
}

// Leading reports whether this node runs the agent: always for a node
// alone on its store, while it holds the lead over a shared one.
func (n *Node) Leading() bool {
	if n.agent == nil {
		return false
	}
	if n.shared == nil {
		return true
	}
	return n.shared.leading.Load()
}

// stopShared gives up the lead (the agent pauses and flushes first) and
// stops following the change log, so that nothing reaches the index or
// the agent while they close.
func (n *Node) stopShared() {
	if n.shared != nil {
		n.shared.stop()
		n.shared.done.Wait()
	}
	if n.relay != nil {
		n.relay.StopFollowing()
	}
}

// journal is where the rights service keeps a list: in the shared
// database when the store is PostgreSQL (an erasure made on one node is
// refused by all, and the audit trail is one), else in a file.
func (n *Node) journal(name, file string) rights.Journal {
	if pg, ok := n.store.Unwrap().(*postgres.Store); ok {
		return pg.Journal(name)
	}
	return rights.FileJournal(file)
}

// openStore opens the event store: PostgreSQL when PostgresURL is set
// (shared with whichever other nodes use it), else badger in the data
// directory (OpenStore).
func openStore(ctx context.Context, o Options) (*store.Exact, error) {
	so := StoreOptions{Backend: BackendBadger, Badger: o.Badger}
	so.Badger.MinFreeMB = o.MinFreeMB // below it, badger opens read-only
	if o.PostgresURL != "" {
		so = StoreOptions{Backend: BackendPostgres, PostgresURL: o.PostgresURL}
	}
	s, err := OpenStore(ctx, so, o.DataDir, o.Limits.MaxLimit, o.Logger)
	if err == nil && o.WrapStore != nil {
		s.Store = o.WrapStore(s.Store)
	}
	return s, err
}

// claimStore records this relay's keys in a shared database the first
// time, and refuses to start on one another relay's keys claimed: its
// instances would sign group state with two keys and refuse each other's.
func (n *Node) claimStore(ctx context.Context) error {
	pg, ok := n.store.Unwrap().(*postgres.Store)
	if !ok {
		return nil
	}
	for _, k := range []struct{ name, file, pk string }{{"relay", relay.RelayKeyFile, n.ids.Relay}, {"agent", relay.AgentKeyFile, n.ids.Agent}} {
		if err := pg.ClaimIdentity(ctx, k.name, k.pk); err != nil {
			if errors.Is(err, postgres.ErrOtherIdentity) {
				return fmt.Errorf("%w: every instance sharing a database needs the same %s; copy it from an instance already running into %s (docs/scaling.md)",
					err, k.file, filepath.Join(n.o.DataDir, k.file))
			}
			return err
		}
	}
	return nil
}

// useOnce is where NIP-98 authorizations are recorded as used for every
// node: the shared database, or nil (the API's own cache) for a node alone.
func (n *Node) useOnce() func(context.Context, string, time.Time) (bool, error) {
	if pg, ok := n.store.Unwrap().(*postgres.Store); ok {
		return pg.UseOnce
	}
	return nil
}

// leading is the API's test of where the agent runs: nil (here) unless
// the store is shared. n.shared is set after the API is built, so the
// function reads it when called.
func (n *Node) leading() func() bool {
	if !n.relay.Shared() || n.agent == nil {
		return nil
	}
	return n.Leading
}

// maxTakeoverRead bounds the change log a new leader reads at start to
// tell what its predecessor received.
const maxTakeoverRead = 100_000

// errReached ends a read of the change log at its head.
var errReached = errors.New("reached the head")

// receivedBy tells the events the previous leader had received: those
// stored up to its last recorded position in the change log, i.e. every
// event but those after it. nil when there was no previous leader.
func (n *Node) receivedBy(ctx context.Context, prev leader.Previous) (func(string) bool, error) {
	feed := store.FeedOf(n.store)
	if prev.Position <= 0 || feed == nil {
		return nil, nil
	}
	head, err := feed.Head(ctx)
	if err != nil {
		return nil, err
	}
	if head-prev.Position > maxTakeoverRead {
		// the previous leader stopped long ago: reading all it missed
		// would slow the start for nothing, as every message of the
		// catch-up window came after it
		return func(string) bool { return false }, nil
	}
	after := make(map[string]bool)
	if head > prev.Position {
		err = feed.Follow(ctx, prev.Position, func(c store.Change) error {
			if c.Op == store.Saved && c.Event != nil { // nil: removed since
				after[c.Event.ID] = true
			}
			if c.Seq >= head {
				return errReached
			}
			return nil
		})
		switch {
		case errors.Is(err, store.ErrFeedTruncated):
			return nil, nil // too far behind to tell: catch up on everything
		case !errors.Is(err, errReached):
			return nil, err
		}
	}
	return func(id string) bool { return !after[id] }, nil
}
