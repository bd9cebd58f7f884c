package main

import (
	"net/url"
	"time"

	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/learn"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// validate checks the [agent] section, reporting through bad.
func (a AgentConfig) validate(bad func(key, format string, args ...any)) {
	if a.Name == "" {
		bad("agent.name", "must not be empty (the agent answers to its name)")
	}
	if _, err := dynconfig.ParseRespondMode(a.RespondMode); err != nil {
		bad("agent.respond_mode", "%v", err)
	}
	if a.ContextHistory < 1 || a.ContextHistory > 1000 {
		bad("agent.context_history", "must be 1..1000, got %d", a.ContextHistory)
	}
	switch a.LLM {
	case "":
	case "ollama":
		if u, err := url.Parse(a.OllamaHost); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("agent.ollama_host", "%q is not an http(s) URL", a.OllamaHost)
		}
		if a.OllamaModel == "" {
			bad("agent.ollama_model", "must name a model when agent.llm is ollama")
		}
	default:
		bad("agent.llm", "%q is not \"\" (no model) or \"ollama\"", a.LLM)
	}
	for key, v := range map[string]int{
		"agent.token_budget": a.TokenBudget, "agent.queue_size": a.QueueSize,
		"agent.flush_every": a.FlushEvery, "agent.max_items": a.MaxItems, "agent.max_lessons": a.MaxLessons,
	} {
		if v <= 0 {
			bad(key, "must be positive, got %d", v)
		}
	}
	if a.FlushInterval.Duration <= 0 {
		bad("agent.flush_interval", "must be positive")
	}
	if a.LLMTimeout.Duration <= 0 {
		bad("agent.llm_timeout", "must be positive")
	}
	a.Learning.validate(bad)
}

// validate checks [agent.learning].
func (l LearningConfig) validate(bad func(key, format string, args ...any)) {
	if l.Debounce.Duration <= 0 || l.Debounce.Duration > 24*time.Hour {
		bad("agent.learning.debounce", "must be between 0s and 24h, exclusive of 0, got %s", l.Debounce.Duration)
	}
	for key, v := range map[string]int{
		"agent.learning.batch_size": l.BatchSize, "agent.learning.calls_per_hour": l.CallsPerHour, "agent.learning.scope_items": l.ScopeItems,
		"agent.learning.summary_tokens": l.SummaryTokens,
	} {
		if v <= 0 {
			bad(key, "must be positive, got %d", v)
		}
	}
	if l.CompactEvery.Duration < 0 || l.CompactEvery.Duration > 0 && l.CompactEvery.Duration < time.Minute {
		bad("agent.learning.compact_every", "must be 0 (never on its own) or at least 1m, got %s", l.CompactEvery.Duration)
	}
	if l.SummaryAfter.Duration < 24*time.Hour {
		bad("agent.learning.summary_after", "must be at least 24h (a week is summarized once it is that old), got %s", l.SummaryAfter.Duration)
	}
	if !(l.SummaryShare > 0 && l.SummaryShare < 1) {
		bad("agent.learning.summary_share", "must be in (0, 1), got %v", l.SummaryShare)
	}
	if !(l.Similar > 0 && l.Similar <= 1) {
		bad("agent.learning.similar", "must be in (0, 1], got %v", l.Similar)
	}
}

// agentOptions turns the [agent] section into the agent's options. The model client
// is made here, where the config is parsed; it does not contact Ollama
// until the first reply, so a stopped Ollama never blocks start-up.
func agentOptions(c Config) (node.AgentOptions, error) {
	a := c.Agent
	mode, _ := dynconfig.ParseRespondMode(a.RespondMode)
	o := node.AgentOptions{Enabled: a.Enabled, Options: agent.Options{
		Name:         a.Name,
		File:         dynconfig.Patch{RespondMode: mode, ContextHistory: a.ContextHistory},
		Instructions: a.Instructions, TokenBudget: a.TokenBudget,
		QueueSize: a.QueueSize, FlushEvery: a.FlushEvery, FlushInterval: a.FlushInterval.Duration,
		MaxItems: a.MaxItems, MaxLessons: a.MaxLessons,
		Learning: learn.Options{
			Enabled: a.Learning.Enabled, Debounce: a.Learning.Debounce.Duration, BatchSize: a.Learning.BatchSize,
			CallsPerHour: a.Learning.CallsPerHour, CompactEvery: a.Learning.CompactEvery.Duration,
			SummaryAfter: a.Learning.SummaryAfter.Duration, ScopeItems: a.Learning.ScopeItems, Similar: a.Learning.Similar,
			SummaryTokens: a.Learning.SummaryTokens, SummaryShare: a.Learning.SummaryShare,
		},
	}}
	if a.Enabled && a.LLM == "ollama" {
		m, err := llm.NewOllama(llm.OllamaOptions{Host: a.OllamaHost, Model: a.OllamaModel, Timeout: a.LLMTimeout.Duration})
		if err != nil {
			return o, err
		}
		o.LLM = m
	}
	return o, nil
}
