package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/memlimit"
	"github.com/snowclaw/snowclaw/plugins/httpapi"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/search"
	"github.com/snowclaw/snowclaw/search/ollamaembed"
)

// serveFlags are the command-line overrides; empty means "not given".
type serveFlags struct {
	addr, data, owner, config, logLevel string
	storeURL                            string // implies store.backend = "postgres"
	cpuprofile, memprofile              string // not settings: measuring aids, so not in the config
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "", "listen address (default 127.0.0.1:3334)")
	fs.StringVar(&f.data, "data", "", "data directory (default ./snowclaw-data)")
	fs.StringVar(&f.owner, "owner", "", "owner public key, npub or hex")
	fs.StringVar(&f.config, "config", "", "TOML config file")
	fs.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error")
	fs.StringVar(&f.storeURL, "store-url", "", "PostgreSQL URL of a shared event store (sets store.backend = postgres)")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the relay to this file until it stops (cmd/snowbench uses it)")
	fs.StringVar(&f.memprofile, "memprofile", "", "write a heap profile to this file when the relay stops, before it closes")
}

func (f *serveFlags) apply(c *Config) {
	for dst, src := range map[*string]string{&c.Addr: f.addr, &c.Data: f.data, &c.Owner: f.owner, &c.LogLevel: f.logLevel} {
		if src != "" {
			*dst = src
		}
	}
	if f.storeURL != "" {
		c.Store.Backend, c.Store.PostgresURL = "postgres", f.storeURL
	}
}

func runServe(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	var fl serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fl.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	cfg, ignored, err := resolveConfig(&fl, environ)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	for _, v := range ignored {
		logger.Warn("environment variable is not a setting; ignored (see config.example.toml)", "name", v.Name)
	}
	limit, source, err := memlimit.Apply(cfg.Relay.MemoryLimitMB)
	if err != nil {
		return err
	}
	logger.Info("soft memory limit", "limit", memlimit.String(limit), "source", source)
	if fl.cpuprofile != "" {
		stop, err := startCPUProfile(fl.cpuprofile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer stop()
	}

	keys, err := relay.LoadKeys(cfg.Data, true)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (is another relay running? choose another with --addr)", cfg.Addr, err)
	}
	opts := nodeOptions(cfg, keys, logger)
	opts.Search.Background = true // serve at once; searches say "loading" until the index is ready
	if opts.Agent, err = agentOptions(cfg); err != nil {
		ln.Close()
		return fmt.Errorf("agent: %w", err)
	}
	if cfg.Search.Enabled && cfg.Search.Embedder == "ollama" {
		emb, err := ollamaembed.New(ctx, ollamaembed.Options{Host: cfg.Search.OllamaHost, Model: cfg.Search.OllamaModel})
		if err != nil {
			ln.Close()
			return fmt.Errorf("search.embedder = ollama: %w", err)
		}
		opts.Search.Search.Embedder = emb
	}
	n, err := node.New(ctx, opts)
	if err != nil {
		ln.Close()
		return err
	}
	ids := n.Relay().Identities()
	relayNpub, agentNpub := snowclaw.NpubOf(ids.Relay), snowclaw.NpubOf(ids.Agent)
	abs, _ := filepath.Abs(cfg.Data)
	logger.Info("snowclaw relay listening", "url", "ws://"+ln.Addr().String(), "data", abs, "relay", relayNpub, "agent", agentNpub, "version", versionString())
	fmt.Fprintf(stdout, "snowclaw relay listening on ws://%s\n", ln.Addr())

	var serveErr error
	for {
		var reopen bool
		reopen, serveErr = serveUntilSpace(ctx, n, ln)
		if !reopen {
			break
		}
		// started read-only on a full disk, and there is room again: the
		// store is opened anew, read-write, on the same address
		addr := ln.Addr().String()
		logger.Warn("disk space is back: closing every connection and opening the event store read-write", "addr", addr)
		if err := n.Close(); err != nil {
			return err
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("listening again on %s after opening the event store read-write: %w", addr, err)
		}
		if n, err = node.New(ctx, opts); err != nil {
			ln.Close()
			return err
		}
		logger.Info("snowclaw relay listening again", "url", "ws://"+ln.Addr().String(), "read_only", n.Relay().StoreReadOnly())
	}
	if fl.memprofile != "" {
		if err := writeHeapProfile(fl.memprofile); err != nil {
			logger.Error("--memprofile", "err", err)
		}
	}
	closeErr := n.Close()
	logger.Info("snowclaw relay stopped")
	if serveErr != nil {
		return serveErr
	}
	return closeErr
}

// errSpaceBack ends the serving of a node whose store is read-only once
// the disk has room for it again.
var errSpaceBack = errors.New("disk space is back")

// spaceCheckEvery is how often a node serving a read-only store (opened
// on a full disk) measures whether the disk has its reserve again.
const spaceCheckEvery = time.Second

// serveUntilSpace serves n on ln until ctx ends; a node whose store was
// opened read-only on a full disk is served until the disk has its
// reserve again, and reopen says so.
func serveUntilSpace(ctx context.Context, n *node.Node, ln net.Listener) (reopen bool, err error) {
	if !n.Relay().StoreReadOnly() {
		return false, n.Serve(ctx, ln)
	}
	serveCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		t := time.NewTicker(spaceCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-serveCtx.Done():
				return
			case <-t.C:
			}
			if st := n.Relay().Disk(); st.Error == "" && st.FreeBytes >= st.ReserveBytes {
				cancel(errSpaceBack)
				return
			}
		}
	}()
	err = n.Serve(serveCtx, ln)
	return ctx.Err() == nil && errors.Is(context.Cause(serveCtx), errSpaceBack), err
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var lv slog.Level
	lv.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv}))
}

// nodeOptions turns the parsed config into the options of the relay and
// of every component, once; the agent's are agentOptions (a model client
// is made there).
func nodeOptions(c Config, keys relay.Keys, logger *slog.Logger) node.Options {
	l, r := c.Limits, c.RateLimits
	proxies, _ := relay.ParseTrustedProxies(c.Relay.TrustedProxies) // checked by Validate
	return node.Options{Options: relay.Options{
		DataDir:     c.Data,
		ServiceURL:  c.Relay.ServiceURL,
		InstanceID:  instanceID(c.Relay.InstanceID),
		Name:        c.Relay.Name,
		Description: c.Relay.Description,
		Contact:     c.Relay.Contact,
		Icon:        c.Relay.Icon,
		Banner:      c.Relay.Banner,
		Version:     versionString(),
		// NIP-11 links; empty ones are left out of the document
		PostingPolicy:   c.Relay.PostingPolicy,
		PrivacyPolicy:   c.Relay.PrivacyPolicy,
		TermsOfService:  c.Relay.TermsOfService,
		Owner:           c.Owner,
		Keys:            keys,
		Limits:          l.Limits,
		MaxMessageBytes: int64(l.MaxMessageBytes),
		EventRateIP:     policies.Rate{PerSecond: r.EventsPerSecondIP, Burst: r.EventsBurstIP},
		EventRatePubkey: policies.Rate{PerSecond: r.EventsPerSecondPubkey, Burst: r.EventsBurstPubkey},
		FilterRateIP:    policies.Rate{PerSecond: r.QueriesPerSecondIP, Burst: r.QueriesBurstIP},
		ConnRateIP:      policies.Rate{PerSecond: r.ConnectionsPerSecondIP, Burst: r.ConnectionsBurstIP},
		MinFreeMB:       c.Store.MinFreeMB,
		HTTP:            relay.HTTPOptions{TrustedProxies: proxies},
		Logger:          logger,
	},
		Search:            node.SearchOptions{Enabled: c.Search.Enabled, Options: searchOptions(c)},
		Remote:            remoteOptions(c.Memory.Remote),
		PostgresURL:       postgresURL(c),
		MaxClockError:     c.Store.MaxClockError.Duration,
		Badger:            badgerOptions(c),
		GroupCreators:     c.Groups.Creators,
		GroupDefaults:     policies.GroupInfo{Private: c.Groups.DefaultPrivate, Hidden: c.Groups.DefaultHidden, Closed: c.Groups.DefaultClosed},
		MaxGroupEventAge:  c.Groups.eventAge(),
		AcceptMovedGroups: c.Groups.AcceptMoved,
		GroupsEncrypted:   c.Groups.Encrypted,
		MetricsToken:      c.HTTP.MetricsToken,
		MCP:               httpapi.MCPOptions{Token: c.HTTP.MCPToken, Identity: c.HTTP.MCPIdentity},
	}
}

// searchOptions are the index bridge's options from the config; who runs
// it (the relay, reindex) adds the store, the keys and the read rule.
func searchOptions(c Config) memsearch.Options {
	return memsearch.Options{
		Search: search.Options{
			Dir:             filepath.Join(c.Data, "search"),
			Embedder:        builtinEmbedder(c.Search.Embedder),
			BM25Weight:      c.Search.BM25Weight,
			VectorWeight:    c.Search.VectorWeight,
			RRFK:            c.Search.RRFK,
			Sources:         sourceWeights(c.Memory.Sources),
			ModelTiers:      modelTiers(c.Memory.ModelTiers),
			DefaultTrust:    c.Memory.DefaultTrust,
			RecencyHalfLife: c.Search.RecencyHalfLife.Duration,
		},
		DefaultLimit:  c.Search.DefaultLimit,
		MaxLimit:      c.Search.MaxLimit,
		FilesDir:      c.Memory.WorkspaceDir,
		IndexedPaths:  c.Memory.IndexedPaths,
		IndexInterval: c.Memory.IndexInterval.Duration,
	}
}

// sourceWeights keys the trust list by hex pubkey ("group:<id>" as is);
// Validate has already checked every key parses.
func sourceWeights(m WeightMap) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, w := range m {
		if pk, err := snowclaw.ParsePubkey(k); err == nil {
			k = pk
		}
		out[k] = w
	}
	return out
}

// modelTiers orders the globs most specific (longest) first, since the
// first match wins and a TOML table has no order.
func modelTiers(m WeightMap) []search.ModelTier {
	out := make([]search.ModelTier, 0, len(m))
	for k, w := range m {
		out = append(out, search.ModelTier{Pattern: k, Weight: w})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Pattern) != len(out[j].Pattern) {
			return len(out[i].Pattern) > len(out[j].Pattern)
		}
		return out[i].Pattern < out[j].Pattern
	})
	return out
}

// startCPUProfile profiles the process into path until the returned
// function runs (at shutdown, after the node has closed).
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeHeapProfile writes the live heap (after a collection) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	err = pprof.Lookup("heap").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// instanceID is the configured instance label, or the host name.
func instanceID(configured string) string {
	if configured != "" {
		return configured
	}
	h, _ := os.Hostname()
	return h
}
