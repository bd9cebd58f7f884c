// Package node is the composition root of a Snowclaw relay process. New
// opens the event store, builds the relay and every component over it
// (groups, search, agent, rights, the memory service, the HTTP API) and
// attaches every hook and route in one ordered place (wire.go); Close
// shuts them down in reverse. snowclaw serve, snowclaw eval and the
// end-to-end tests run a node, so that what is tested is what is served.
// snowclaw reindex does not: it opens only the store and the index.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/plugins/agentlink"
	"github.com/snowclaw/snowclaw/plugins/groupcrypt"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/plugins/httpapi"
	"github.com/snowclaw/snowclaw/plugins/memory"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/plugins/remotesearch"
	"github.com/snowclaw/snowclaw/plugins/rights"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/clock"
	"github.com/snowclaw/snowclaw/relay/store"
)

// Options configure a node: the relay's own, and each component's.
// cmd/snowclaw fills them once from the config.
type Options struct {
	relay.Options

	// Search, when Enabled, answers NIP-50 filters from an index in
	// Search.Search.Dir (default <data>/search).
	Search SearchOptions
	// Remote, when it lists remotes and search is on, answers searches
	// with include:remote from the remote relays too (plugins/remotesearch).
	Remote RemoteOptions
	// Agent configures the resident agent (docs/design.md "The agent").
	Agent AgentOptions

	GroupCreators []string // hex
	GroupDefaults policies.GroupInfo
	// MaxGroupEventAge refuses group events older than this (NIP-29
	// late publication) unless AcceptMovedGroups; zero is one hour.
	MaxGroupEventAge  time.Duration
	AcceptMovedGroups bool
	// MaxClockError is the widest error of the shared store's clock as
	// this instance reads it that it decides by; past it, writes and
	// NIP-98 logins are refused as retryable. 0 is one second.
	MaxClockError time.Duration
	// GroupsEncrypted are the groups whose memories the owner's config
	// keeps sealed with a group key (docs/group-encryption.md).
	GroupsEncrypted []string
	// GroupKeyRetry is how often every encrypted group's key deliveries
	// are checked and the failed ones sent again; 0 is
	// groupcrypt.DefaultRetryEvery.
	GroupKeyRetry time.Duration

	// PostgresURL is the shared store's database, when the store is
	// PostgreSQL: the agent's leader is elected there (shared.go).
	PostgresURL string
	// Badger tunes the badger store, when the store is badger.
	Badger store.BadgerOptions

	MCP          httpapi.MCPOptions // the /mcp endpoint
	MetricsToken string             // bearer token for GET /metrics; "" = only the owner over NIP-98

	// WrapStore, when set, wraps the event store under the exact-answer
	// layer: the tests' fault injection (a store that fails a write).
	WrapStore func(eventstore.Store) eventstore.Store
}

// SearchOptions are the index bridge's options; the node fills the
// store, the keys, the read rule and, when empty, the directory.
type SearchOptions struct {
	Enabled bool
	// Background: New returns without waiting for the index, which loads
	// behind the serving relay (memsearch.Start; searches answer "loading"
	// until it is ready). Otherwise New returns once the index is ready.
	Background bool
	memsearch.Options
}

// RemoteOptions are the remote layer's; the node fills the local index,
// ranking, read rule, what must stay gone, metrics and logger.
// AgentDefault makes the agent's recall for public replies layered.
type RemoteOptions struct {
	remotesearch.Options
	AgentDefault bool
}

// AgentOptions are the agent's; the node fills its key, the owner, and
// its publish, query, recall, quoting and rights functions.
type AgentOptions struct {
	Enabled bool
	agent.Options
}

// Node is a relay process: the store and everything built over it.
type Node struct {
	o      Options
	ids    policies.Identities
	vis    *policies.Visibility
	store  *store.Exact
	relay  *relay.Relay
	groups *groups.Groups
	crypt  *groupcrypt.Plugin  // the encrypted group tier's keys
	search *memsearch.Plugin   // nil when search is off
	remote *remotesearch.Layer // nil without remotes or search
	agent  *agent.Agent        // nil when the agent is off
	rights *rights.Service
	audit  *rights.Audit
	erased *rights.Erased // over a shared store, its journal follows the other instances' erasures until closed
	memory *memory.Service
	api    *httpapi.API
	shared *shared // nil unless the store is shared (shared.go)

	stopKeys context.CancelFunc // ends the group keys' retry loop
	keysDone chan struct{}      // closed when it has ended

	clock     *clock.Clock       // the cluster's clock (clock.go)
	stopClock context.CancelFunc // ends its readings of the store's clock
	clockDone chan struct{}
}

// New builds a node, in this order: the store, the relay over it, the
// groups' state, the search index, the agent, the rights service, the
// memory service and the HTTP API; then every hook and route is attached
// (wire) and the agent starts.
func New(ctx context.Context, o Options) (n *Node, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	n = &Node{o: o}
	defer func() {
		if err != nil {
			n.Close()
			n = nil
		}
	}()
	if n.ids, err = o.Keys.Identities(o.Owner); err != nil {
		return n, err
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return n, fmt.Errorf("creating data directory: %w", err)
	}
	// every reader and writer, plugins included, gets exact answers
	if n.store, err = openStore(ctx, o); err != nil {
		return n, err
	}
	if err := n.claimStore(ctx); err != nil {
		return n, err
	}
	// over a shared store every instance dates and judges by the store's
	// clock: from here on o.Clock is that clock
	n.startClock(ctx)
	o = n.o
	n.groups = groups.New(groups.Options{
		IDs: n.ids, RelaySecret: o.Keys.RelaySecret,
		Creators: o.GroupCreators, Defaults: o.GroupDefaults, MaxEventAge: o.MaxGroupEventAge, AcceptMoved: o.AcceptMovedGroups, Encrypted: o.GroupsEncrypted,
		Limits: o.Limits, Store: n.store, Clock: o.Clock, Logger: o.Logger,
	})
	n.vis = &policies.Visibility{IDs: n.ids, Groups: n.groups}
	ro := o.Options
	ro.Groups = n.groups
	if n.relay, err = relay.New(ctx, n.store, ro); err != nil {
		return n, err
	}
	n.registerClockMetrics()
	// only reads: the metadata is brought in line by Start, once wired
	if err := n.groups.Load(ctx); err != nil {
		return n, fmt.Errorf("rebuilding group state: %w", err)
	}
	// the group keys before the index, which opens group memories with them
	if err := n.openGroupKeys(ctx); err != nil {
		return n, err
	}
	if o.Search.Enabled {
		if err := n.openSearch(ctx); err != nil {
			return n, err
		}
		if len(o.Remote.Remotes) > 0 {
			if err := n.newRemote(); err != nil {
				return n, err
			}
		}
	}
	// the agent and the rights service need each other: the agent hands
	// people's rights requests to the service, which forgets in the
	// agent's memory too. The agent is built first; its Commands reach
	// the service, built next, before the agent starts.
	if o.Agent.Enabled {
		if err := n.newAgent(); err != nil {
			return n, err
		}
	}
	if err := n.openRights(); err != nil {
		return n, err
	}
	if err := n.newServices(); err != nil {
		return n, err
	}
	n.wire(ctx)
	if n.search != nil && o.Search.Background {
		n.search.Begin()
	}
	n.crypt.Start(ctx)
	n.runGroupKeys()
	if n.relay.Shared() {
		n.startShared()
	}
	n.groups.Start(ctx)
	if !n.relay.Shared() && n.agent != nil {
		if err := n.agent.Start(ctx); err != nil {
			return n, fmt.Errorf("agent: %w", err)
		}
	}
	return n, nil
}

func (n *Node) openSearch(ctx context.Context) error {
	so := n.o.Search.Options
	if so.Search.Dir == "" {
		so.Search.Dir = filepath.Join(n.o.DataDir, "search")
	}
	so.AgentPubkey, so.AgentSecret, so.OwnerPubkey = n.ids.Agent, n.o.Keys.AgentSecret, n.ids.Owner
	so.Store, so.CanRead, so.Logger = n.store, n.relay.CanRead, n.o.Logger
	so.Feed, so.Position = store.FeedOf(n.store), n.relay.FeedPosition
	so.OpenGroup = n.crypt.Open
	open := memsearch.Open
	if n.o.Search.Background { // loaded once New is done (Begin)
		open = func(context.Context, memsearch.Options) (*memsearch.Plugin, error) { return memsearch.New(so) }
	}
	mem, err := open(ctx, so)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	n.search = mem
	return nil
}

// openGroupKeys loads the encrypted groups' keys (plugins/groupcrypt).
// Keys are made, rotated and sent only where the agent would run: alone
// on the store, or while leading over a shared one.
func (n *Node) openGroupKeys(ctx context.Context) error {
	c, err := groupcrypt.New(groupcrypt.Options{
		AgentSecret: n.o.Keys.AgentSecret, Store: n.store, Groups: n.groups,
		IsSystem: n.ids.IsSystem, Owner: n.ids.Owner, RetryEvery: n.o.GroupKeyRetry, Logger: n.o.Logger,
		Active: func() bool { return !n.relay.Shared() || n.shared != nil && n.shared.leading.Load() },
	})
	if err != nil {
		return err
	}
	if err := c.Load(ctx); err != nil {
		return fmt.Errorf("group keys: %w", err)
	}
	n.crypt = c
	return nil
}

// runGroupKeys runs the group keys' periodic reconcile (failed deliveries
// sent again) until Close.
func (n *Node) runGroupKeys() {
	ctx, stop := context.WithCancel(context.Background())
	n.stopKeys, n.keysDone = stop, make(chan struct{})
	go func() {
		defer close(n.keysDone)
		n.crypt.Run(ctx)
	}()
}

// newRemote builds the layered search over the index (plugins/remotesearch).
func (n *Node) newRemote() error {
	ro := n.o.Remote.Options
	ro.Local, ro.Ranking, ro.CanRead = n.search, n.o.Search.Search, n.relay.CanRead
	ro.DefaultLimit, ro.MaxLimit = n.o.Search.DefaultLimit, n.o.Search.MaxLimit
	ro.Stored = func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error {
		return store.Each(ctx, n.store, f, fn)
	}
	ro.Gone = []func(context.Context, *snowclaw.Event) error{n.relay.RejectDeleted, n.rejectErased}
	ro.Metrics, ro.Logger = n.relay.Metrics(), n.o.Logger
	l, err := remotesearch.New(ro)
	if err != nil {
		return fmt.Errorf("remote search: %w", err)
	}
	n.remote = l
	return nil
}

// newAgent builds the resident agent. It publishes through the relay's
// write path, the one client events take, so the write rules hold for the
// agent as for anyone.
func (n *Node) newAgent() error {
	ao := n.o.Agent.Options
	ao.Secret, ao.Owner = n.o.Keys.AgentSecret, n.ids.Owner
	ao.Publish = n.relay.Publish
	ao.Query = func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error {
		return store.Each(ctx, n.store, f, fn)
	}
	if n.search != nil {
		var layered *remotesearch.Layer
		if n.o.Remote.AgentDefault {
			layered = n.remote
		}
		ao.Recall = agentlink.Recall(n.search, layered, n.relay.CanRead)
	}
	ao.MayShow = agentlink.MayShow(n.vis, n.o.Clock)
	n.crypt.WrapAgent(&ao)
	ao.Commands = func(ctx context.Context, from, text string) (string, bool) {
		return n.rights.Command(ctx, from, text)
	}
	ao.KnownKeys = append([]string{n.ids.Relay}, ao.KnownKeys...)
	if n.relay.Shared() {
		// it runs only while this node leads (shared.go)
		ao.Standby, ao.CatchUp = true, catchUpWindow
	}
	ao.Logger = n.o.Logger
	// the agent's profile names the software's version and, as its NIP-65
	// relay list, this relay's public address when there is one
	if ao.Profile.Version == "" {
		ao.Profile.Version = n.o.Version
	}
	if len(ao.Profile.Relays) == 0 && n.o.ServiceURL != "" {
		ao.Profile.Relays = []string{n.o.ServiceURL}
	}
	a, err := agent.New(ao)
	if err != nil {
		return err
	}
	n.agent = a
	return nil
}

// openRights opens the audit trail and the erasure list in <data>/privacy
// and builds the rights service. The audit trail is a file of its own so
// that it survives a destroy, which removes events.
func (n *Node) openRights() error {
	dir := filepath.Join(n.o.DataDir, "privacy")
	audit, err := rights.OpenAuditOn(n.journal("audit", filepath.Join(dir, "audit.jsonl")))
	if err != nil {
		return fmt.Errorf("privacy audit: %w", err)
	}
	erased, err := rights.OpenErasedOn(n.journal("erased", filepath.Join(dir, "erased")))
	if err != nil {
		audit.Close()
		return fmt.Errorf("privacy erasures: %w", err)
	}
	svc, err := rights.New(rights.Options{
		Store: n.store, Delete: n.relay.Delete, Agent: n.agent,
		AgentSecret: n.o.Keys.AgentSecret, Owner: n.ids.Owner,
		Audit: audit, Erased: erased, Logger: n.o.Logger,
		HasGroup: func(id string) bool { _, ok := n.groups.GroupInfo(id); return ok },
		IsMember: n.groups.IsMember,
	})
	if err != nil {
		audit.Close()
		erased.Close()
		return err
	}
	n.rights, n.audit, n.erased = svc, audit, erased
	return nil
}

// newServices builds the memory service and the HTTP API over it.
func (n *Node) newServices() error {
	o, r := n.o, n.relay
	mo := memory.Options{
		Store: n.store, Publish: r.Publish, CanRead: r.CanRead, IDs: n.ids,
		AgentSecret: o.Keys.AgentSecret, Groups: n.groups,
		Index: n.search, Ranking: o.Search.Search,
		Agent: n.agent, Rights: n.rights, DiskCheck: r.CheckDisk, Refused: r.CountRefusal,
		Self:   memory.Self{AgentName: o.Agent.Name, RelayName: o.Name, Version: o.Version, LLM: o.Agent.LLM},
		Logger: o.Logger,
	}
	if n.remote != nil {
		mo.RemoteProfiles = n.remote.Profiles
	}
	if n.search != nil {
		// through the relay, which counts and times them with the
		// websocket's searches
		mo.Query = r.Search
	}
	svc, err := memory.New(mo)
	if err != nil {
		return fmt.Errorf("memory service: %w", err)
	}
	n.memory = svc
	var remotes func() []remotesearch.RemoteStatus
	if n.remote != nil {
		remotes = n.remote.Status
	}
	n.api = httpapi.New(httpapi.Options{
		Relay: r, Memory: svc, Rights: n.rights, Agent: n.agent, Index: n.search,
		MCP: o.MCP, MetricsToken: o.MetricsToken, Version: o.Version, Logger: o.Logger,
		UseOnce: n.useOnce(), Leading: n.leading(), GroupKeys: n.crypt, Clock: n.clock,
		Remotes: remotes,
	})
	return nil
}

// Relay is the node's relay.
func (n *Node) Relay() *relay.Relay { return n.relay }

// Groups is the NIP-29 state.
func (n *Node) Groups() *groups.Groups { return n.groups }

// Search is the search index (nil when search is off).
func (n *Node) Search() *memsearch.Plugin { return n.search }

// Memory is the memory service the HTTP API and MCP call.
func (n *Node) Memory() *memory.Service { return n.memory }

// Agent is the resident agent (nil when it is off).
func (n *Node) Agent() *agent.Agent { return n.agent }

// Handler serves the relay's websocket and HTTP routes.
func (n *Node) Handler() http.Handler { return n.relay.Handler() }

// Serve accepts connections on ln until ctx is cancelled (relay.Serve),
// or until an index loading in the background fails, which it returns.
func (n *Node) Serve(ctx context.Context, ln net.Listener) error {
	if n.search == nil || !n.o.Search.Background {
		return n.relay.Serve(ctx, ln)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	failed := make(chan error, 1)
	go func() {
		select {
		case <-n.search.Loaded():
			if err := n.search.State().Err; err != nil {
				failed <- fmt.Errorf("search index: %w", err)
				stop()
			}
		case <-ctx.Done():
		}
	}()
	err := n.relay.Serve(ctx, ln)
	select {
	case ferr := <-failed:
		return ferr
	default:
		return err
	}
}

// Close shuts down in the reverse order of New: the agent first (its
// last flush goes through the relay's write path, into the index and the
// store), then the index, the audit trail, the relay, and the store.
// Call it after Serve has returned.
func (n *Node) Close() error {
	var errs []error
	if n.stopKeys != nil {
		n.stopKeys()
		<-n.keysDone
	}
	if n.groups != nil {
		// what is due of the groups' metadata, while the relay still writes
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n.groups.Close(ctx)
		cancel()
	}
	n.stopShared()
	if n.agent != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := n.agent.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("agent: %w", err))
		}
		cancel()
	}
	if n.search != nil {
		errs = append(errs, n.search.Close())
	}
	if n.audit != nil {
		errs = append(errs, n.audit.Close())
	}
	if n.erased != nil {
		errs = append(errs, n.erased.Close())
	}
	n.closeClock()
	if n.relay != nil {
		errs = append(errs, n.relay.Close())
	}
	if n.store != nil {
		n.store.Close()
	}
	return errors.Join(errs...)
}
