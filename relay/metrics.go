package relay

import (
	"runtime"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/buildinfo"
)

// metrics are the relay's series, kept in a registry of this relay's own
// (tests run many relays in one process, so the global default registry
// would mix them) and served by GET /metrics (plugins/httpapi). No series
// names the process it comes from: Prometheus adds the target's own
// instance and job labels to every sample it scrapes, and a label of the
// same name set here would collide with them (renamed exported_instance,
// or overwriting the target's under honor_labels). The label values of
// each vector are resolved once here: the hot paths (every write, every
// query) only add to a counter.
type metrics struct {
	reg       *prometheus.Registry
	storedVec *prometheus.CounterVec
	plugins   []storedClass // CountStoredAs, tested before the relay's own classes
	stored    [numKindClasses]prometheus.Counter
	rejected  [numRejectReasons]prometheus.Counter
	queries   [numQueryTypes]prometheus.Counter
	search    timer
	behind    prometheus.Counter // feedmetrics.go
	again     prometheus.Counter // feedmetrics.go
}

// newMetrics makes the registry with the standard go_* and process_*
// collectors, snowclaw_build_info for version (Options.Version) and the
// relay's own series.
func newMetrics(version string) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	stored := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snowclaw_events_stored_total",
		Help: "Events stored through the write pipeline, by kind class.",
	}, []string{"class"})
	m.storedVec = stored
	for i, name := range kindClassNames {
		m.stored[i] = stored.WithLabelValues(name)
	}
	rejected := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snowclaw_events_rejected_total",
		Help: "Events refused, on every path (websocket, write pipeline, HTTP API), by the NIP-01 prefix of the reason.",
	}, []string{"reason"})
	for i, name := range rejectReasons {
		m.rejected[i] = rejected.WithLabelValues(name)
	}
	queries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snowclaw_queries_total",
		Help: "Reads: stored REQ filters, COUNT filters, NIP-50 searches (any path) and HTTP API calls.",
	}, []string{"type"})
	for i, name := range queryTypeNames {
		m.queries[i] = queries.WithLabelValues(name)
	}
	search := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "snowclaw_search_duration_seconds",
		Help:    "Time to answer one NIP-50 search (websocket and HTTP API).",
		Buckets: searchBuckets,
	})
	m.search = timer{search}
	// the usual info series (prometheus_build_info, grafana_build_info):
	// constant 1, its labels joined onto other series to tell a rollout
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "snowclaw_build_info",
		Help:        "Always 1; the labels say which build of snowclaw is running.",
		ConstLabels: prometheus.Labels{"version": version, "revision": buildinfo.Revision(), "goversion": runtime.Version()},
	})
	build.Set(1)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		stored, rejected, queries, search, build,
	)
	return m
}

// Kind classes of stored events: a handful of labels, not one per kind,
// so the series stay few whatever clients send. The relay's own classes
// are what the protocol tells apart; what a plugin gives meaning to (the
// memories among kind 30078) it labels through CountStoredAs.
const (
	classAppData  = iota // kind 30078 that no plugin class took
	classChat            // events carrying an h tag (NIP-29 chat)
	classGroup           // NIP-29 moderation and relay-signed metadata
	classDM              // gift wraps and legacy DMs
	classDeletion        // NIP-09
	classOther
	numKindClasses
)

var kindClassNames = [numKindClasses]string{"appdata", "chat", "group", "dm", "deletion", "other"}

// storedClass is a plugin's label of stored events and the events it
// takes.
type storedClass struct {
	match func(*snowclaw.Event) bool
	c     prometheus.Counter
}

// CountStoredAs counts the stored events match reports under class in
// snowclaw_events_stored_total instead of the relay's own class for them.
// Classes are tried in the order added, before the relay's; a class
// named like one of the relay's adds to the same series. Like the hooks,
// it is called while the relay is assembled, before serving.
func (r *Relay) CountStoredAs(class string, match func(*snowclaw.Event) bool) {
	r.met.plugins = append(r.met.plugins, storedClass{match: match, c: r.met.storedVec.WithLabelValues(class)})
}

// storedCounter is the series a stored event counts in.
func (m *metrics) storedCounter(evt *snowclaw.Event) prometheus.Counter {
	for _, pc := range m.plugins {
		if pc.match(evt) {
			return pc.c
		}
	}
	return m.stored[kindClass(evt)]
}

func kindClass(evt *snowclaw.Event) int {
	switch {
	case evt.Kind == snowclaw.KindAppData:
		return classAppData
	case snowclaw.IsGroupStateKind(evt.Kind) || snowclaw.IsGroupMetadataKind(evt.Kind):
		return classGroup
	case evt.Kind == snowclaw.KindGiftWrap || evt.Kind == snowclaw.KindLegacyDM:
		return classDM
	case evt.Kind == snowclaw.KindDeletion:
		return classDeletion
	case evt.Group != "":
		return classChat
	}
	return classOther
}

// Refusal reasons are the NIP-01 prefixes of the OK message, by the
// refusal's reason (never its text); the other reasons are "other".
var rejectReasons = [...]string{"invalid", "blocked", "restricted", "duplicate", "rate-limited", "auth-required", "pow", "error", "other"}

const numRejectReasons = len(rejectReasons)

// rejectReason is the one place a refusal becomes a label: its
// snowclaw.ReasonOf.
func rejectReason(err error) int {
	prefix := snowclaw.ReasonOf(err).Prefix()
	for i, r := range rejectReasons[:numRejectReasons-1] {
		if prefix == r {
			return i
		}
	}
	return numRejectReasons - 1
}

// Query types of snowclaw_queries_total.
const (
	queryREQ    = iota // a stored-event REQ filter (websocket)
	queryCount         // a COUNT filter (websocket)
	querySearch        // a NIP-50 search: websocket REQ or COUNT, HTTP API, MCP
	queryAPI           // an HTTP API call under /api/v1
	numQueryTypes
)

var queryTypeNames = [numQueryTypes]string{"req", "count", "search", "api"}

func (m *metrics) query(typ int) { m.queries[typ].Inc() }

// refused counts one refusal of an event, whichever path refused it.
func (m *metrics) refused(err error) { m.rejected[rejectReason(err)].Inc() }

// wrote counts the outcome of one pass through the write pipeline (add):
// stored, refused, or neither (a duplicate is skipped without error, an
// ephemeral event is only broadcast).
func (m *metrics) wrote(evt *snowclaw.Event, skipped bool, err error) {
	switch {
	case err != nil:
		m.refused(err)
	case !skipped && !nostr.IsEphemeralKind(evt.Kind):
		m.storedCounter(evt).Inc()
	}
}

// searchBuckets are the upper bounds (seconds) of the search latency
// histogram: from a cached keyword hit to a slow embedder round trip.
var searchBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// timer observes durations into a histogram in seconds.
type timer struct{ h prometheus.Histogram }

func (t timer) observe(d time.Duration) { t.h.Observe(d.Seconds()) }
