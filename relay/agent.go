package relay

import (
	"context"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/internal/storeq"
	"github.com/snowclaw/snowclaw/plugins/agentlink"
)

// startAgent creates the resident agent, links it to the hooks and loads
// its memory. It publishes through add, the path client events take, so
// the write rules hold for the agent as for anyone.
func (r *Relay) startAgent(ctx context.Context) error {
	ao := r.opts.Agent
	opts := agent.Options{
		Secret: r.opts.Keys.AgentSecret, Owner: r.ids.Owner, Name: ao.Name,
		Publish: r.add,
		Query: func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error {
			return storeq.Each(ctx, r.store, f, fn)
		},
		LLM: ao.LLM, File: ao.File, Instructions: ao.Instructions, TokenBudget: ao.TokenBudget,
		KnownKeys: append([]string{r.ids.Relay}, ao.KnownKeys...),
		QueueSize: ao.QueueSize, FlushEvery: ao.FlushEvery, FlushInterval: ao.FlushInterval,
		MaxItems: ao.MaxItems, MaxLessons: ao.MaxLessons,
		Logger: r.log,
	}
	if r.mem != nil {
		opts.Recall = agentlink.Recall(r.mem, r.ids.Agent)
	}
	a, err := agent.New(opts)
	if err != nil {
		return err
	}
	agentlink.Feed(r.khatru, a)
	r.agent = a
	if err := a.Start(ctx); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// Agent exposes the resident agent (nil when it is off).
func (r *Relay) Agent() *agent.Agent { return r.agent }
