package httpapi

import (
	"bufio"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// serveMetrics is GET /metrics in Prometheus' text exposition format
// (0.0.4), written by hand: a few counters do not justify a client
// library. Scrapers authenticate with the bearer token of
// Options.MetricsToken; the owner may also sign the request (NIP-98).
func (a *API) serveMetrics(w http.ResponseWriter, req *http.Request) {
	if err := a.metricsAuth(req); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="snowclaw metrics"`)
		writeError(w, statusOf(err), err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	b := bufio.NewWriter(w)
	a.writeMetrics(b)
	b.Flush()
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

// writeMetrics renders the relay's own series, then the gauges read at
// scrape time from the index and the agent.
func (a *API) writeMetrics(w *bufio.Writer) {
	a.o.Relay.WriteMetrics(w)
	one := func(name, typ, help string, v any) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %v\n", name, help, name, typ, name, v)
	}
	if a.o.Index != nil {
		one("snowclaw_search_index_docs", "gauge", "Documents in the search index.", a.o.Index.Count())
	}
	if a.o.Agent != nil {
		s := a.o.Agent.Stats()
		one("snowclaw_agent_queue_depth", "gauge", "Events waiting in the agent's input queue.", s.QueueDepth)
		one("snowclaw_agent_queue_capacity", "gauge", "Size of the agent's input queue.", s.QueueCap)
		one("snowclaw_agent_dropped_total", "counter", "Events dropped because the agent's queue was full.", s.Dropped)
		one("snowclaw_agent_handled_total", "counter", "Events the agent has handled.", s.Handled)
		one("snowclaw_agent_replies_total", "counter", "Replies the agent has written.", s.Replies)
		one("snowclaw_agent_llm_errors_total", "counter", "Failed model calls.", s.LLMErrors)
		one("snowclaw_agent_flushed_total", "counter", "Memory records the agent has written to the relay.", s.Flushed)
		if l := s.Learning; l.Enabled {
			one("snowclaw_agent_learning_calls_total", "counter", "Model calls made by learning from conversation.", l.Calls)
			one("snowclaw_agent_learning_prompt_tokens_total", "counter", "Prompt tokens of learning's model calls, as the model counts them.", l.PromptTokens)
			one("snowclaw_agent_learning_output_tokens_total", "counter", "Output tokens of learning's model calls.", l.OutputTokens)
			one("snowclaw_agent_learning_errors_total", "counter", "Learning's model calls that failed or broke the JSON schema.", l.Errors)
			one("snowclaw_agent_learning_skipped_budget_total", "counter", "Learning's model calls not made because the hourly budget was spent.", l.SkippedBudget)
			one("snowclaw_agent_learning_pending", "gauge", "Messages waiting to be read by learning.", l.Pending)
			one("snowclaw_agent_learning_added_total", "counter", "Memories learning added.", l.Added)
			one("snowclaw_agent_learning_updated_total", "counter", "Memories learning wrote a new version of.", l.Updated)
		}
	}
}
