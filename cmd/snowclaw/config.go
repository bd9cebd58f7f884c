package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/memlimit"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
	"github.com/snowclaw/snowclaw/relay/store"
	"github.com/snowclaw/snowclaw/search"
)

// Config is everything `snowclaw serve` can be told. Sources, each
// overriding the one before: defaults, the TOML file (--config or
// SNOWCLAW_CONFIG), SNOWCLAW_* environment variables, flags. Every key is
// documented in config.example.toml, which a test keeps in step with this
// struct.
type Config struct {
	Addr     string `toml:"addr"`
	Data     string `toml:"data"`
	Owner    string `toml:"owner"`
	LogLevel string `toml:"log_level"`

	Relay      RelayConfig  `toml:"relay"`
	Limits     LimitsConfig `toml:"limits"`
	RateLimits RateConfig   `toml:"rate_limits"`
	Groups     GroupsConfig `toml:"groups"`
	Search     SearchConfig `toml:"search"`
	Memory     MemoryConfig `toml:"memory"`
	Agent      AgentConfig  `toml:"agent"`
	HTTP       HTTPConfig   `toml:"http"`
	Store      StoreConfig  `toml:"store"`
}

// StoreConfig is the event store: which one, and its guard against a
// full disk.
type StoreConfig struct {
	// MinFreeMB is the free space (MiB) kept on the data directory's
	// volume; below it new events are refused ("error: disk full").
	MinFreeMB int `toml:"min_free_mb"`
	// Backend is "badger" (in <data>/events, one process) or "postgres"
	// (PostgresURL, shared by several instances).
	Backend string `toml:"backend"`
	// PostgresURL is postgres://user:password@host:5432/database.
	PostgresURL string `toml:"postgres_url"`
	// CacheMB is badger's cache of decompressed blocks (MiB), 0 off.
	CacheMB int `toml:"cache_mb"`
	// MaxClockError is how far off an instance may know the shared
	// store's clock and still decide by it (relay/clock).
	MaxClockError Duration `toml:"max_clock_error"`
}

// HTTPConfig is what the HTTP side needs beyond NIP-98: static tokens for
// clients that cannot sign each request (a Prometheus scraper, an MCP host).
type HTTPConfig struct {
	MetricsToken string `toml:"metrics_token"`
	MCPToken     string `toml:"mcp_token"`
	MCPIdentity  string `toml:"mcp_identity"`
}

// AgentConfig is the resident agent (docs/agent.md).
type AgentConfig struct {
	Enabled        bool     `toml:"enabled"`
	Name           string   `toml:"name"`
	RespondMode    string   `toml:"respond_mode"`
	ContextHistory int      `toml:"context_history"`
	LLM            string   `toml:"llm"`
	OllamaHost     string   `toml:"ollama_host"`
	OllamaModel    string   `toml:"ollama_model"`
	LLMTimeout     Duration `toml:"llm_timeout"`
	TokenBudget    int      `toml:"token_budget"`
	Instructions   string   `toml:"instructions"`
	QueueSize      int      `toml:"queue_size"`
	FlushEvery     int      `toml:"flush_every"`
	FlushInterval  Duration `toml:"flush_interval"`
	MaxItems       int      `toml:"max_items"`
	MaxLessons     int      `toml:"max_lessons"`
	// Learning is [agent.learning]: learning from conversation and
	// consolidation (docs/agent.md#what-the-agent-learns-from-conversation),
	// when a model is configured.
	Learning LearningConfig `toml:"learning"`
}

// LearningConfig is [agent.learning].
type LearningConfig struct {
	Enabled      bool     `toml:"enabled"`
	Debounce     Duration `toml:"debounce"`
	BatchSize    int      `toml:"batch_size"`
	CallsPerHour int      `toml:"calls_per_hour"`
	CompactEvery Duration `toml:"compact_every"`
	SummaryAfter Duration `toml:"summary_after"`
	// SummaryTokens and SummaryShare are the size trigger of
	// docs/agent.md#consolidation-dreaming: past
	// that many tokens not yet summarized, the oldest share is.
	SummaryTokens int     `toml:"summary_tokens"`
	SummaryShare  float64 `toml:"summary_share"`
	ScopeItems    int     `toml:"scope_items"`
	Similar       float64 `toml:"similar"`
}

type SearchConfig struct {
	Enabled         bool     `toml:"enabled"`
	Embedder        string   `toml:"embedder"`
	OllamaHost      string   `toml:"ollama_host"`
	OllamaModel     string   `toml:"ollama_model"`
	BM25Weight      float64  `toml:"bm25_weight"`
	VectorWeight    float64  `toml:"vector_weight"`
	RRFK            float64  `toml:"rrf_k"`
	DefaultLimit    int      `toml:"default_limit"`
	MaxLimit        int      `toml:"max_limit"`
	RecencyHalfLife Duration `toml:"recency_half_life"`
}

// MemoryConfig is the trust configuration (docs/design.md#search).
type MemoryConfig struct {
	// Sources: npub/hex of an agent, or "group:<id>", to a trust weight.
	Sources WeightMap `toml:"sources"`
	// ModelTiers: glob over snow:model values to a trust weight; the most
	// specific (longest) matching pattern wins.
	ModelTiers   WeightMap `toml:"model_tiers"`
	DefaultTrust float64   `toml:"default_trust"`
	// Workspace files to index (docs/design.md#search), globs relative to
	// WorkspaceDir ("" = the working directory); ** spans folders.
	IndexedPaths  []string     `toml:"indexed_paths"`
	WorkspaceDir  string       `toml:"workspace_dir"`
	IndexInterval Duration     `toml:"index_interval"`
	Remote        RemoteConfig `toml:"remote"`
}

// WeightMap is a TOML table of name = weight; in the environment it is
// written "name=weight,name=weight".
type WeightMap map[string]float64

func parseWeights(s string) (WeightMap, error) {
	out := WeightMap{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		w, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%q is not name=weight", item)
		}
		out[strings.TrimSpace(k)] = w
	}
	return out, nil
}

type RelayConfig struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	Contact     string `toml:"contact"`
	Icon        string `toml:"icon"`
	// Banner, PostingPolicy, PrivacyPolicy and TermsOfService are http(s)
	// URLs shown in NIP-11.
	Banner         string `toml:"banner"`
	PostingPolicy  string `toml:"posting_policy"`
	PrivacyPolicy  string `toml:"privacy_policy"`
	TermsOfService string `toml:"terms_of_service"`
	ServiceURL     string `toml:"service_url"`
	// InstanceID names this process in the leader election over a shared
	// store; "" is the host name (serve.go).
	InstanceID string `toml:"instance_id"`
	// TrustedProxies may set X-Forwarded-For, -Host and -Proto: CIDRs or
	// single addresses.
	TrustedProxies []string `toml:"trusted_proxies"`
	// MemoryLimitMB is the process's soft memory limit in MiB
	// (memlimit.go): 0 automatic (cgroupShare of a container's limit, else
	// none), -1 off. GOMEMLIMIT in the environment wins over it.
	MemoryLimitMB int `toml:"memory_limit_mb"`
}

// LimitsConfig is the [limits] table: the relay's policies.Limits, whose
// keys it promotes, and the websocket frame cap, which is the HTTP
// server's and no policy's.
type LimitsConfig struct {
	MaxMessageBytes int `toml:"max_message_bytes"`
	policies.Limits
}

type RateConfig struct {
	EventsPerSecondIP      float64 `toml:"events_per_second_ip"`
	EventsBurstIP          int     `toml:"events_burst_ip"`
	EventsPerSecondPubkey  float64 `toml:"events_per_second_pubkey"`
	EventsBurstPubkey      int     `toml:"events_burst_pubkey"`
	QueriesPerSecondIP     float64 `toml:"queries_per_second_ip"`
	QueriesBurstIP         int     `toml:"queries_burst_ip"`
	ConnectionsPerSecondIP float64 `toml:"connections_per_second_ip"`
	ConnectionsBurstIP     int     `toml:"connections_burst_ip"`
}

// Duration is a time.Duration written as "90s", "1h" in TOML and env.
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (e.g. 90s, 1h)", b)
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DefaultConfig is what `snowclaw serve` runs with when told nothing.
func DefaultConfig() Config {
	return Config{
		Addr:     "127.0.0.1:3334",
		Data:     "./snowclaw-data",
		LogLevel: "info",
		Relay: RelayConfig{
			Name:           "snowclaw",
			Description:    "Nostr relay with NIP-29 groups and an agent memory",
			TrustedProxies: []string{},
		},
		Limits: LimitsConfig{MaxMessageBytes: 256 * 1024, Limits: policies.DefaultLimits()},
		RateLimits: RateConfig{
			EventsPerSecondIP: 50, EventsBurstIP: 200,
			EventsPerSecondPubkey: 20, EventsBurstPubkey: 100,
			QueriesPerSecondIP: 50, QueriesBurstIP: 200,
			ConnectionsPerSecondIP: 5, ConnectionsBurstIP: 50,
		},
		Groups: GroupsConfig{
			DefaultPrivate: true,
			MaxEventAge:    Duration{time.Hour},
		},
		Search: SearchConfig{
			Enabled:     true,
			Embedder:    "builtin",
			OllamaHost:  "http://127.0.0.1:11434",
			OllamaModel: "nomic-embed-text",
			// tuned on LoCoMo with the built-in embedder (docs/search-tuning.md)
			BM25Weight:   1,
			VectorWeight: 0.25,
			RRFK:         10,
			DefaultLimit: search.DefaultLimit,
			MaxLimit:     100,
		},
		Store:  StoreConfig{MinFreeMB: 256, Backend: "badger", CacheMB: store.DefaultCacheMB, MaxClockError: Duration{time.Second}},
		Memory: MemoryConfig{Sources: WeightMap{}, ModelTiers: WeightMap{}, DefaultTrust: 1, IndexInterval: Duration{30 * time.Minute}, Remote: defaultRemote()},
		Agent: AgentConfig{
			Enabled: true, Name: "Snowclaw", RespondMode: "mention", ContextHistory: 20,
			OllamaHost: "http://127.0.0.1:11434", OllamaModel: "llama3.2", LLMTimeout: Duration{2 * time.Minute},
			TokenBudget: 8192, QueueSize: 4096, FlushEvery: 20, FlushInterval: Duration{30 * time.Second},
			MaxItems: 500, MaxLessons: 200,
			Learning: LearningConfig{
				Enabled: true, Debounce: Duration{30 * time.Second}, BatchSize: 20, CallsPerHour: 60,
				CompactEvery: Duration{24 * time.Hour}, SummaryAfter: Duration{7 * 24 * time.Hour},
				SummaryTokens: 150_000, SummaryShare: 0.7, ScopeItems: 100, Similar: 0.8,
			},
		},
	}
}

// loadFile overlays a TOML file on cfg. Unknown keys are an error: a typo
// must not silently leave a default in force.
func loadFile(cfg *Config, path string) error {
	md, err := toml.DecodeFile(path, cfg)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return fmt.Errorf("config file %s: unknown key(s) %s (see config.example.toml)", path, strings.Join(keys, ", "))
	}
	return nil
}

// Validate checks the whole config and normalizes public keys to hex. All
// problems are reported at once, each naming its key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)))
	}
	if host, port, err := net.SplitHostPort(c.Addr); err != nil {
		bad("addr", "%q is not host:port (e.g. 127.0.0.1:3334)", c.Addr)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		bad("addr", "%q has no valid port", c.Addr)
	} else if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		bad("addr", "%q: give an IP address to listen on (e.g. 127.0.0.1 or 0.0.0.0)", c.Addr)
	}
	if strings.TrimSpace(c.Data) == "" {
		bad("data", "must name a directory")
	}
	if c.Owner != "" {
		pk, err := snowclaw.ParsePubkey(c.Owner)
		if err != nil {
			bad("owner", "%v", err)
		} else {
			c.Owner = pk
		}
	}
	if c.HTTP.MCPIdentity != "" {
		pk, err := snowclaw.ParsePubkey(c.HTTP.MCPIdentity)
		if err != nil {
			bad("http.mcp_identity", "%v", err)
		} else {
			c.HTTP.MCPIdentity = pk
		}
	}
	for name, tok := range map[string]string{"http.metrics_token": c.HTTP.MetricsToken, "http.mcp_token": c.HTTP.MCPToken} {
		if tok != "" && len(tok) < 16 {
			bad(name, "is %d characters; use at least 16 (e.g. openssl rand -hex 16)", len(tok))
		}
	}
	c.Groups.validate(bad)
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level", "%q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.Relay.ServiceURL != "" {
		u, err := url.Parse(c.Relay.ServiceURL)
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			bad("relay.service_url", "%q is not a ws:// or wss:// URL", c.Relay.ServiceURL)
		}
	}
	for key, v := range map[string]string{"relay.icon": c.Relay.Icon, "relay.banner": c.Relay.Banner,
		"relay.posting_policy": c.Relay.PostingPolicy, "relay.privacy_policy": c.Relay.PrivacyPolicy,
		"relay.terms_of_service": c.Relay.TermsOfService} {
		if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			bad(key, "%q is not an http:// or https:// URL", v)
		}
	}
	if id := c.Relay.InstanceID; len(id) > 128 || !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
		bad("relay.instance_id", "%q is not a name of at most 128 printable characters", id)
	}
	if _, err := relay.ParseTrustedProxies(c.Relay.TrustedProxies); err != nil {
		bad("relay.trusted_proxies", "%v", err)
	}
	l := c.Limits
	for key, v := range map[string]int{
		"limits.max_message_bytes": l.MaxMessageBytes, "limits.max_event_bytes": l.MaxEventBytes,
		"limits.max_content_bytes": l.MaxContentBytes, "limits.max_tags": l.MaxTags,
		"limits.max_tag_value_bytes": l.MaxTagValueBytes, "limits.max_future_seconds": int(l.MaxFutureSeconds),
		"limits.max_filter_values": l.MaxFilterValues, "limits.max_limit": l.MaxLimit,
		"limits.default_limit": l.DefaultLimit, "limits.max_filters": l.MaxFilters,
		"limits.max_subscriptions": l.MaxSubscriptions, "limits.max_subid_length": l.MaxSubIDLength,
	} {
		if v <= 0 {
			bad(key, "must be positive, got %d", v)
		}
	}
	if l.DefaultLimit > l.MaxLimit {
		bad("limits.default_limit", "%d is above limits.max_limit %d", l.DefaultLimit, l.MaxLimit)
	}
	if l.MaxMessageBytes < l.MaxEventBytes {
		bad("limits.max_message_bytes", "%d is below limits.max_event_bytes %d; oversized events would cut the connection instead of getting a clear refusal", l.MaxMessageBytes, l.MaxEventBytes)
	}
	r := c.RateLimits
	for key, pair := range map[string][2]float64{
		"rate_limits.events_*_ip":      {r.EventsPerSecondIP, float64(r.EventsBurstIP)},
		"rate_limits.events_*_pubkey":  {r.EventsPerSecondPubkey, float64(r.EventsBurstPubkey)},
		"rate_limits.queries_*_ip":     {r.QueriesPerSecondIP, float64(r.QueriesBurstIP)},
		"rate_limits.connections_*_ip": {r.ConnectionsPerSecondIP, float64(r.ConnectionsBurstIP)},
	} {
		if math.IsNaN(pair[0]) || math.IsInf(pair[0], 0) {
			// NaN passes every comparison below and turns the limit off
			bad(key, "rate must be a finite number, got %v", pair[0])
		} else if pair[0] < 0 || pair[1] < 0 {
			bad(key, "must not be negative")
		} else if pair[0] > 0 && pair[1] < 1 {
			bad(key, "burst must be at least 1 when the rate is set")
		}
	}
	sc := c.Search
	switch sc.Embedder {
	case "builtin", "hash", "glove":
	case "ollama":
		if u, err := url.Parse(sc.OllamaHost); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("search.ollama_host", "%q is not an http(s) URL", sc.OllamaHost)
		}
		if sc.OllamaModel == "" {
			bad("search.ollama_model", "must name a model when search.embedder is ollama")
		}
	default:
		bad("search.embedder", "%q is not builtin, hash, glove or ollama", sc.Embedder)
	}
	for key, v := range map[string]float64{"search.bm25_weight": sc.BM25Weight, "search.vector_weight": sc.VectorWeight, "search.rrf_k": sc.RRFK, "memory.default_trust": c.Memory.DefaultTrust} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			bad(key, "must be a non-negative number, got %v", v)
		}
	}
	if sc.BM25Weight == 0 && sc.VectorWeight == 0 {
		bad("search.bm25_weight", "bm25_weight and vector_weight cannot both be 0")
	}
	if sc.DefaultLimit <= 0 || sc.MaxLimit <= 0 || sc.DefaultLimit > sc.MaxLimit {
		bad("search.default_limit", "limits must be positive and default_limit (%d) at most max_limit (%d)", sc.DefaultLimit, sc.MaxLimit)
	}
	if sc.RecencyHalfLife.Duration < 0 {
		bad("search.recency_half_life", "must not be negative")
	}
	for name, m := range map[string]WeightMap{"memory.sources": c.Memory.Sources, "memory.model_tiers": c.Memory.ModelTiers} {
		for k, w := range m {
			if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				bad(name, "%s: weight must be a non-negative number, got %v", k, w)
			}
			if name == "memory.sources" && !strings.HasPrefix(k, "group:") {
				if _, err := snowclaw.ParsePubkey(k); err != nil {
					bad(name, "%q is neither a public key nor group:<id>", k)
				}
			}
		}
	}
	if c.Memory.IndexInterval.Duration <= 0 {
		bad("memory.index_interval", "must be positive")
	}
	c.Memory.Remote.validate(bad, c.Search.Enabled)
	c.Agent.validate(bad)
	if c.Groups.MaxEventAge.Duration <= 0 {
		bad("groups.max_event_age", "must be positive")
	}
	if c.Groups.MaxModerationAge.Duration < 0 {
		bad("groups.max_moderation_age", "must be positive")
	}
	if c.Relay.MemoryLimitMB < memlimit.Off || c.Relay.MemoryLimitMB > 1<<30 {
		bad("relay.memory_limit_mb", "must be -1 (off), 0 (automatic) or a size up to 1073741824 MiB, got %d", c.Relay.MemoryLimitMB)
	}
	if c.Store.MinFreeMB < 0 || c.Store.MinFreeMB > 1<<30 {
		bad("store.min_free_mb", "must be between 0 (no guard) and 1073741824 MiB, got %d", c.Store.MinFreeMB)
	}
	c.Store.validate(bad)
	if len(errs) > 0 {
		return fmt.Errorf("bad config:\n  %w", errors.Join(errs...))
	}
	return nil
}

// resolveConfig applies defaults → file → env → flags and validates. The
// SNOWCLAW_* variables that name no setting come back in ignored, for the
// command to report.
func resolveConfig(fl *serveFlags, environ []string) (cfg Config, ignored []ignoredEnv, err error) {
	cfg = DefaultConfig()
	path := fl.config
	if path == "" {
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, "SNOWCLAW_CONFIG="); ok {
				path = v
			}
		}
	}
	if path != "" {
		if err := loadFile(&cfg, path); err != nil {
			return cfg, nil, err
		}
	}
	if ignored, err = loadEnv(&cfg, environ); err != nil {
		return cfg, ignored, err
	}
	fl.apply(&cfg)
	return cfg, ignored, cfg.Validate()
}

// warnIgnoredEnv tells a command-line user about the variables
// resolveConfig ignored (serve logs them instead).
func warnIgnoredEnv(w io.Writer, ignored []ignoredEnv) {
	for _, v := range ignored {
		fmt.Fprintln(w, "snowclaw: warning:", v)
	}
}
