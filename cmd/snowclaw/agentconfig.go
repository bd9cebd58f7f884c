package main

import (
	"net/url"

	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
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
