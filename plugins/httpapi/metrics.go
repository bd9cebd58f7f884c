package httpapi

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/learn"
)

// serveMetrics is GET /metrics: the relay's registry (its own series, the
// standard go_* and process_* collectors, and the index's and agent's
// series registered by registerMetrics) in Prometheus' exposition format,
// through client_golang's handler. Scrapers authenticate with the bearer
// token of Options.MetricsToken; the owner may also sign the request
// (NIP-98).
func (a *API) serveMetrics(w http.ResponseWriter, req *http.Request) {
	if err := a.metricsAuth(req); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="snowclaw metrics"`)
		writeError(w, statusOf(err), err.Error())
		return
	}
	a.metrics.ServeHTTP(w, req)
}

// metricsAuth accepts the configured bearer token (compared in constant
// time) or a NIP-98 signature by the owner.
func (a *API) metricsAuth(req *http.Request) error {
	h := req.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		tok = strings.TrimSpace(tok)
		if a.o.MetricsToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(a.o.MetricsToken)) == 1 {
			return nil
		}
		return snowclaw.AuthRequired("wrong metrics token")
	}
	if strings.HasPrefix(h, "Nostr ") {
		pk, err := a.auth(req)
		if err != nil {
			return snowclaw.AuthRequired("%s", err)
		}
		if a.ids.Owner == "" || pk != a.ids.Owner {
			return snowclaw.Restricted("metrics are for the relay's owner or a scraper with the metrics token")
		}
		return nil
	}
	return snowclaw.AuthRequired("send Authorization: Bearer <metrics_token>, or a NIP-98 signature by the owner")
}

// registerMetrics adds the series read at scrape time from the index and
// the agent, which keep their own counters (the agent's are atomics on
// its hot path, and neither package knows of Prometheus), and builds the
// handler over the relay's registry.
func (a *API) registerMetrics() {
	reg := a.o.Relay.Metrics()
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	counter := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
	}
	if ix := a.o.Index; ix != nil {
		gauge("snowclaw_search_index_docs", "Documents in the search index.", func() float64 { return float64(ix.Count()) })
	}
	if ag := a.o.Agent; ag != nil {
		stat := func(f func(s agent.Stats) float64) func() float64 {
			return func() float64 { return f(ag.Stats()) }
		}
		gauge("snowclaw_agent_queue_depth", "Events waiting in the agent's input queue.", stat(func(s agent.Stats) float64 { return float64(s.QueueDepth) }))
		gauge("snowclaw_agent_queue_capacity", "Size of the agent's input queue.", stat(func(s agent.Stats) float64 { return float64(s.QueueCap) }))
		counter("snowclaw_agent_dropped_total", "Events dropped because the agent's queue was full.", stat(func(s agent.Stats) float64 { return float64(s.Dropped) }))
		counter("snowclaw_agent_handled_total", "Events the agent has handled.", stat(func(s agent.Stats) float64 { return float64(s.Handled) }))
		counter("snowclaw_agent_replies_total", "Replies the agent has written.", stat(func(s agent.Stats) float64 { return float64(s.Replies) }))
		counter("snowclaw_agent_llm_errors_total", "Failed model calls.", stat(func(s agent.Stats) float64 { return float64(s.LLMErrors) }))
		counter("snowclaw_agent_flushed_total", "Memory records the agent has written to the relay.", stat(func(s agent.Stats) float64 { return float64(s.Flushed) }))
		counter("snowclaw_agent_flush_errors_total", "Memory records the agent failed to write to the relay.", stat(func(s agent.Stats) float64 { return float64(s.FlushErrors) }))
		// learning is on or off for the agent's life (its options)
		if ag.Stats().Learning.Enabled {
			learning := func(f func(l learn.Stats) float64) func() float64 {
				return func() float64 { return f(ag.Stats().Learning) }
			}
			counter("snowclaw_agent_learning_calls_total", "Model calls made by learning from conversation.", learning(func(l learn.Stats) float64 { return float64(l.Calls) }))
			counter("snowclaw_agent_learning_prompt_tokens_total", "Prompt tokens of learning's model calls, as the model counts them.", learning(func(l learn.Stats) float64 { return float64(l.PromptTokens) }))
			counter("snowclaw_agent_learning_output_tokens_total", "Output tokens of learning's model calls.", learning(func(l learn.Stats) float64 { return float64(l.OutputTokens) }))
			counter("snowclaw_agent_learning_errors_total", "Learning's model calls that failed or broke the JSON schema.", learning(func(l learn.Stats) float64 { return float64(l.Errors) }))
			counter("snowclaw_agent_learning_skipped_budget_total", "Learning's model calls not made because the hourly budget was spent.", learning(func(l learn.Stats) float64 { return float64(l.SkippedBudget) }))
			gauge("snowclaw_agent_learning_pending", "Messages waiting to be read by learning.", learning(func(l learn.Stats) float64 { return float64(l.Pending) }))
			counter("snowclaw_agent_learning_added_total", "Memories learning added.", learning(func(l learn.Stats) float64 { return float64(l.Added) }))
			counter("snowclaw_agent_learning_updated_total", "Memories learning wrote a new version of.", learning(func(l learn.Stats) float64 { return float64(l.Updated) }))
		}
	}
	a.metrics = promhttp.HandlerFor(a.o.Relay.Gatherer(), promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{a.log},
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// slogPrinter logs the handler's gathering errors (a collector that
// failed) through the API's logger.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("metrics", "err", fmt.Sprint(v...)) }
