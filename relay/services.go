package relay

import (
	"context"
	"fmt"

	"github.com/snowclaw/snowclaw/plugins/httpapi"
	"github.com/snowclaw/snowclaw/plugins/memory"
)

// openServices builds the memory service and the HTTP API over the relay
// and attaches the memory's hooks. It runs in New once the index, the
// agent and the rights service exist, before the agent starts. The
// composition root (cmd/snowclaw/internal/node) is to take this over.
func (r *Relay) openServices(ctx context.Context) error {
	mo := memory.Options{
		Store: r.store, Publish: r.add, CanRead: r.canRead, IDs: r.ids,
		AgentSecret: r.opts.Keys.AgentSecret, Groups: r.groups,
		Index: r.mem, Ranking: r.opts.Search.Search,
		Agent: r.agent, Rights: r.rights, DiskCheck: r.disk.check,
		Self:   memory.Self{AgentName: r.opts.Agent.Name, RelayName: r.opts.Name, Version: r.opts.Version, LLM: r.opts.Agent.LLM},
		Logger: r.log,
	}
	if r.mem != nil {
		mo.Query = r.searchQuery // counted and timed with the websocket's
	}
	svc, err := memory.New(mo)
	if err != nil {
		return fmt.Errorf("memory service: %w", err)
	}
	// the owner's source_preference, live: refused when unreadable (after
	// the write rules have refused non-owners), re-applied on every
	// version stored or deleted (deleted hooks run after the store removed
	// it, so the reload sees the store without it), and applied now
	r.RejectEvent = append(r.RejectEvent, svc.RejectBadPreference)
	r.OnEventSaved = append(r.OnEventSaved, svc.ConfigChanged)
	r.OnEventDeleted = append(r.OnEventDeleted, svc.ConfigChanged)
	svc.ApplyTrust(ctx)

	api := httpapi.New(httpapi.Options{
		Relay: r, Memory: svc, Rights: r.rights, Agent: r.agent, Index: r.mem,
		MCP: r.opts.MCP, MetricsToken: r.opts.MetricsToken, Version: r.opts.Version, Logger: r.log,
	})
	api.Routes(r.mux)
	return nil
}
