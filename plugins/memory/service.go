// Package memory is the memory service: what each reader sees of the
// stored memory items (list, get with version history, search), storing
// and forgetting them, the conflicts the index finds and the owner's
// rulings on them (signed by the agent), the agent directory, and live
// trust (the owner's source_preference applied to ranking).
//
// It is one Service that every transport calls: the HTTP API and MCP
// (plugins/httpapi) through snowclaw.MemoryBackend bound to one reader,
// and the rest through its methods. Websocket NIP-50 searches do not come
// here: the relay answers them from the index directly (memsearch), under
// the same read rule. The service never writes to the store itself:
// everything it publishes goes through the relay's write path (Publish),
// so every write rule holds for it as for a client.
package memory

import (
	"context"
	"errors"
	"log/slog"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/plugins/groups"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
	"github.com/snowclaw/snowclaw/plugins/remotesearch"
	"github.com/snowclaw/snowclaw/plugins/rights"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/search"
)

// Options wire the service to the relay and its other components.
type Options struct {
	Store   eventstore.Store                          // answers exactly (store.Exact)
	Publish func(context.Context, *nostr.Event) error // the relay's write path
	CanRead func(reader string, evt *nostr.Event) bool
	IDs     policies.Identities
	// AgentSecret decrypts what the agent may open (view.go) and signs
	// the owner's rulings (resolve.go).
	AgentSecret string
	Groups      *groups.Groups

	// Index is the search index; nil: search is off, and with it search,
	// conflicts and live trust. Query is how searches reach it (the relay
	// counts and times them); nil: Index.Query.
	Index *memsearch.Plugin
	Query func(ctx context.Context, reader string, f snowclaw.Filter) ([]*nostr.Event, []snowclaw.ExplainRow, error)
	// Ranking is the index configuration from the config file: the trust
	// view shows its file weights beside the live list.
	Ranking search.Options

	Agent  *agent.Agent // nil: the agent is off (no text memories)
	Rights *rights.Service
	// DiskCheck refuses a store before the agent takes a text it could
	// not write; nil: unguarded.
	DiskCheck func() error
	// Refused counts a store refused before it reached Publish (which
	// counts its own refusals): the relay's rejected-event metric. nil:
	// not counted.
	Refused func(error)

	// Self describes this relay's agent in the directory.
	Self Self
	// RemoteProfiles lists the profiles the remote relays of
	// [memory.remote] hold, verified (plugins/remotesearch); the directory
	// adds the agents among them, marked with their origin. nil: none.
	RemoteProfiles func(context.Context) []remotesearch.Found

	Logger *slog.Logger
}

// Self is what the directory says of this relay's own agent where its
// profile is silent.
type Self struct {
	AgentName string
	RelayName string
	Version   string
	LLM       llm.Chatter // nil: no model, no chat capability
}

// Service is the memory service.
type Service struct {
	o     Options
	log   *slog.Logger
	ids   policies.Identities
	trust trustLive
}

// New builds the service. Attach its write check and trust hooks to the
// relay (RejectBadPreference, ConfigChanged) and call ApplyTrust once
// the index is open.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Publish == nil || o.CanRead == nil || o.Groups == nil {
		return nil, errors.New("memory: Store, Publish, CanRead and Groups are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Query == nil && o.Index != nil {
		o.Query = o.Index.Query
	}
	if o.DiskCheck == nil {
		o.DiskCheck = func() error { return nil }
	}
	return &Service{o: o, log: o.Logger, ids: o.IDs}, nil
}

// For binds the service to one reader: the memory as the HTTP API and
// MCP serve it to that key.
func (s *Service) For(reader string) snowclaw.MemoryBackend {
	return bound{s: s, reader: reader}
}

type bound struct {
	s      *Service
	reader string
}

func (b bound) Search(ctx context.Context, req snowclaw.SearchRequest) (snowclaw.SearchResponse, error) {
	return b.s.Search(ctx, b.reader, req)
}

func (b bound) List(ctx context.Context, req snowclaw.ListRequest) ([]snowclaw.MemoryView, error) {
	return b.s.List(ctx, b.reader, req)
}

func (b bound) Get(ctx context.Context, id string) (snowclaw.MemoryDetail, error) {
	return b.s.Get(ctx, b.reader, id)
}

func (b bound) Store(ctx context.Context, req snowclaw.StoreRequest) (snowclaw.MemoryView, error) {
	return b.s.Store(ctx, b.reader, req)
}

func (b bound) Forget(ctx context.Context, id string) (snowclaw.ForgetResponse, error) {
	return b.s.Forget(ctx, b.reader, id)
}

// errNotFound is the one answer for a memory that is missing and for one
// the reader may not read, so the API does not reveal which ids exist.
var errNotFound = snowclaw.NotFound("no such memory, or not yours to read")

func firstTag(evt *nostr.Event, key, fallback string) string {
	if v := snowclaw.TagValues(evt, key); len(v) > 0 && v[0] != "" {
		return v[0]
	}
	return fallback
}

func isEventID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
