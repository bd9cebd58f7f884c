package node_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

const metricsToken = "scrape-me-7c1f"

// testVersion is the version the metric tests give the relay.
const testVersion = "v0.0.0-metrics-test"

// withMetrics turns on scraping with the test token, names the instance
// (which no series may then carry) and sets the version.
func withMetrics(o *node.Options) {
	o.MetricsToken = metricsToken
	o.InstanceID = "relay-under-test"
	o.Version = testVersion
}

// scrape reads /metrics with the bearer token, parses it with
// Prometheus' own text parser and returns series → value:
// name{label="v",…} with labels sorted, histograms as _bucket{le=…},
// _sum and _count. No sample may carry a label named instance or job:
// those are the scraper's own, which it adds to every sample of the
// target.
func (e *testEnv) scrape() map[string]float64 {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.httpURL("/metrics"), nil)
	req.Header.Set("Authorization", "Bearer "+metricsToken)
	resp := do(e.t, req)
	if resp.code != 200 {
		e.t.Fatalf("scrape: %d %s", resp.code, resp.body)
	}
	if ct := resp.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		e.t.Fatalf("content type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(resp.body))
	if err != nil {
		e.t.Fatalf("parsing the exposition: %v", err)
	}
	out := map[string]float64{}
	for name, fam := range fams {
		for _, m := range fam.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				if n := lp.GetName(); n == "instance" || n == "job" {
					e.t.Fatalf("%s carries %s=%q: that label is the scraper's", name, n, lp.GetValue())
				}
				labels = append(labels, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			key := func(suffix string, extra ...string) string {
				all := append(slices.Clone(labels), extra...)
				slices.Sort(all)
				if len(all) == 0 {
					return name + suffix
				}
				return name + suffix + "{" + strings.Join(all, ",") + "}"
			}
			switch fam.GetType() {
			case dto.MetricType_COUNTER:
				out[key("")] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key("")] = m.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				out[key("")] = m.GetUntyped().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					out[key("_bucket", fmt.Sprintf("le=%q", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)))] = float64(b.GetCumulativeCount())
				}
				out[key("_bucket", `le="+Inf"`)] = float64(h.GetSampleCount())
				out[key("_sum")] = h.GetSampleSum()
				out[key("_count")] = float64(h.GetSampleCount())
			case dto.MetricType_SUMMARY:
				out[key("_sum")] = m.GetSummary().GetSampleSum()
				out[key("_count")] = float64(m.GetSummary().GetSampleCount())
			}
		}
	}
	return out
}

func TestMetrics_Auth(t *testing.T) {
	e := startEnv(t, withMetrics)
	alice := newUser()
	for _, c := range []struct {
		name, auth string
		want       int
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong token", "Bearer nope", http.StatusUnauthorized},
		{"token", "Bearer " + metricsToken, http.StatusOK},
		{"owner", e.nip98(e.owner, "GET", e.httpURL("/metrics")), http.StatusOK},
		{"someone else", e.nip98(alice, "GET", e.httpURL("/metrics")), http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.httpURL("/metrics"), nil)
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp := do(t, req)
			if resp.code != c.want {
				t.Fatalf("status %d, want %d: %s", resp.code, c.want, resp.body)
			}
			if c.want == 200 && !strings.Contains(resp.body, "# TYPE snowclaw_events_stored_total counter") {
				t.Fatalf("body: %s", resp.body)
			}
			if c.want != 200 && strings.Contains(resp.body, "snowclaw_") {
				t.Fatalf("refused scrape leaks series: %s", resp.body)
			}
		})
	}
	// no token configured: a bearer is never enough
	e2 := startEnv(t)
	req, _ := http.NewRequest("GET", e2.httpURL("/metrics"), nil)
	req.Header.Set("Authorization", "Bearer ")
	if resp := do(t, req); resp.code != http.StatusUnauthorized {
		t.Fatalf("empty token with none configured: %d", resp.code)
	}
}

func TestMetrics_CountersMove(t *testing.T) {
	e := startAgentEnv(t, withMetrics)
	before := e.scrape()
	for _, s := range []string{
		`snowclaw_agent_queue_depth`, `snowclaw_agent_dropped_total`, `snowclaw_agent_replies_total`,
		`snowclaw_search_index_docs`, `snowclaw_connections`, `snowclaw_search_duration_seconds_bucket{le="+Inf"}`,
	} {
		if _, ok := before[s]; !ok {
			t.Fatalf("series %s missing", s)
		}
	}

	m := e.mustPublish(e.ac, memory(e.alice, "fact/metrics", `{"summary":"telemetry counts every write"}`))
	e.refusedWith(e.ac, mkEvent(e.alice, 30078, nostr.Tags{{"d", "snowclaw:config:global"}}, "{}"), "restricted:")
	if got := search(t, e.testEnv, &e.alice, nostr.Filter{Search: "telemetry"}); len(got) == 0 || got[0].ID != m.ID {
		t.Fatalf("websocket search: %v", ids(got))
	}
	if hit, ok := hitFor(e.searchAPI(&e.alice, "telemetry writes", ""), m.ID); !ok || hit.Memory == nil {
		t.Fatal("API search missed the memory")
	}
	mustFetch(t, e.ac, nostr.Filter{Kinds: []int{1}})
	count(t, e.ac, nostr.Filter{Kinds: []int{30078}})
	after := e.scrape()

	for _, c := range []struct {
		series string
		min    float64
	}{
		{`snowclaw_events_stored_total{class="memory"}`, 1},
		{`snowclaw_events_rejected_total{reason="restricted"}`, 1},
		{`snowclaw_queries_total{type="search"}`, 2},
		{`snowclaw_queries_total{type="api"}`, 1},
		{`snowclaw_queries_total{type="req"}`, 1},
		{`snowclaw_queries_total{type="count"}`, 1},
		{`snowclaw_search_duration_seconds_count`, 2},
		{`snowclaw_search_duration_seconds_bucket{le="+Inf"}`, 2},
	} {
		if d := after[c.series] - before[c.series]; d < c.min {
			t.Errorf("%s moved by %v, want at least %v", c.series, d, c.min)
		}
	}
	if after[`snowclaw_search_duration_seconds_sum`] <= before[`snowclaw_search_duration_seconds_sum`] {
		t.Error("search duration sum did not grow")
	}
	if after[`snowclaw_search_index_docs`] < 1 || after[`snowclaw_connections`] < 2 {
		t.Errorf("gauges: docs %v, connections %v", after[`snowclaw_search_index_docs`], after[`snowclaw_connections`])
	}
	// buckets are cumulative
	prev := 0.0
	for _, le := range []string{"0.001", "0.01", "0.1", "1", "5", "+Inf"} {
		v := after[`snowclaw_search_duration_seconds_bucket{le="`+le+`"}`]
		if v < prev {
			t.Fatalf("bucket le=%s is %v, below the previous %v", le, v, prev)
		}
		prev = v
	}
}
