package relay

import (
	"bufio"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// serveMetrics is GET /metrics in Prometheus' text exposition format
// (0.0.4), written by hand: a few counters do not justify a client
// library. Scrapers authenticate with the bearer token of
// Options.MetricsToken; the owner may also sign the request (NIP-98).
func (r *Relay) serveMetrics(w http.ResponseWriter, req *http.Request) {
	if err := r.metricsAuth(req); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="snowclaw metrics"`)
		writeError(w, statusOf(err), err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	b := bufio.NewWriter(w)
	r.writeMetrics(b)
	b.Flush()
}

// metricsAuth accepts the configured bearer token (compared in constant
// time) or a NIP-98 signature by the owner.
func (r *Relay) metricsAuth(req *http.Request) error {
	h := req.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
		tok = strings.TrimSpace(tok)
		if r.opts.MetricsToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(r.opts.MetricsToken)) == 1 {
			return nil
		}
		return fmt.Errorf("auth-required: wrong metrics token")
	}
	if strings.HasPrefix(h, "Nostr ") {
		pk, err := r.httpAuth(req)
		if err != nil {
			return fmt.Errorf("auth-required: %s", err)
		}
		if r.ids.Owner == "" || pk != r.ids.Owner {
			return fmt.Errorf("restricted: metrics are for the relay's owner or a scraper with the metrics token")
		}
		return nil
	}
	return fmt.Errorf("auth-required: send Authorization: Bearer <metrics_token>, or a NIP-98 signature by the owner")
}

// writeMetrics renders every series. Gauges are read at scrape time from
// their owners (index, agent, connection registry).
func (r *Relay) writeMetrics(w *bufio.Writer) {
	m := &r.met
	family := func(name, typ, help string) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	// one is a family with a single unlabelled value
	one := func(name, typ, help string, v any) {
		family(name, typ, help)
		fmt.Fprintf(w, "%s %v\n", name, v)
	}

	family("snowclaw_events_stored_total", "counter", "Events stored through the write pipeline, by kind class.")
	for i, name := range kindClassNames {
		fmt.Fprintf(w, "snowclaw_events_stored_total{class=%q} %d\n", name, m.stored[i].Load())
	}
	family("snowclaw_events_rejected_total", "counter", "Events refused by the write rules, by the NIP-01 prefix of the reason.")
	for i, name := range rejectReasons {
		fmt.Fprintf(w, "snowclaw_events_rejected_total{reason=%q} %d\n", name, m.rejected[i].Load())
	}
	family("snowclaw_queries_total", "counter", "Reads: stored REQ filters, COUNT filters, NIP-50 searches (any path) and HTTP API calls.")
	for i, name := range queryTypeNames {
		fmt.Fprintf(w, "snowclaw_queries_total{type=%q} %d\n", name, m.queries[i].Load())
	}

	family("snowclaw_search_duration_seconds", "histogram", "Time to answer one NIP-50 search (websocket and HTTP API).")
	var cum uint64
	for i, le := range searchBuckets {
		cum += m.search.slots[i].Load()
		fmt.Fprintf(w, "snowclaw_search_duration_seconds_bucket{le=%q} %d\n", strconv.FormatFloat(le, 'g', -1, 64), cum)
	}
	cum += m.search.slots[len(searchBuckets)].Load()
	// the count is the +Inf bucket: summing the slots keeps the two equal
	// while searches run during the scrape
	fmt.Fprintf(w, "snowclaw_search_duration_seconds_bucket{le=\"+Inf\"} %d\n", cum)
	fmt.Fprintf(w, "snowclaw_search_duration_seconds_sum %s\n", strconv.FormatFloat(seconds(m.search.sumNS.Load()), 'g', -1, 64))
	fmt.Fprintf(w, "snowclaw_search_duration_seconds_count %d\n", cum)

	one("snowclaw_connections", "gauge", "Open websocket connections.", len(r.subs.all()))

	if r.mem != nil {
		one("snowclaw_search_index_docs", "gauge", "Documents in the search index.", r.mem.Count())
	}
	if r.agent != nil {
		s := r.agent.Stats()
		one("snowclaw_agent_queue_depth", "gauge", "Events waiting in the agent's input queue.", s.QueueDepth)
		one("snowclaw_agent_queue_capacity", "gauge", "Size of the agent's input queue.", s.QueueCap)
		one("snowclaw_agent_dropped_total", "counter", "Events dropped because the agent's queue was full.", s.Dropped)
		one("snowclaw_agent_handled_total", "counter", "Events the agent has handled.", s.Handled)
		one("snowclaw_agent_replies_total", "counter", "Replies the agent has written.", s.Replies)
		one("snowclaw_agent_llm_errors_total", "counter", "Failed model calls.", s.LLMErrors)
		one("snowclaw_agent_flushed_total", "counter", "Memory records the agent has written to the relay.", s.Flushed)
	}
}
