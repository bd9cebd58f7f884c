package relay

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// metrics are the relay's counters, kept with atomics on the hot paths
// (every write, every query) and rendered by GET /metrics (relay/exports.go, plugins/httpapi/metrics.go)
// in Prometheus' text format. The zero value is ready to use.
type metrics struct {
	stored   [numKindClasses]atomic.Uint64
	rejected [numRejectReasons]atomic.Uint64
	queries  [numQueryTypes]atomic.Uint64
	search   histogram
}

// Kind classes of stored events: a handful of labels, not one per kind,
// so the series stay few whatever clients send.
const (
	classMemory   = iota // snow:memory:* items
	classAppData         // the rest of kind 30078: agent records, config
	classChat            // events carrying an h tag (NIP-29 chat)
	classGroup           // NIP-29 moderation and relay-signed metadata
	classDM              // gift wraps and legacy DMs
	classDeletion        // NIP-09
	classOther
	numKindClasses
)

var kindClassNames = [numKindClasses]string{"memory", "appdata", "chat", "group", "dm", "deletion", "other"}

func kindClass(evt *nostr.Event) int {
	switch {
	case evt.Kind == snowclaw.KindAppData:
		if ns, _ := snowclaw.NamespaceOf(evt); ns == snowclaw.NamespaceMemoryItem {
			return classMemory
		}
		return classAppData
	case snowclaw.IsGroupStateKind(evt.Kind) || snowclaw.IsGroupMetadataKind(evt.Kind):
		return classGroup
	case evt.Kind == snowclaw.KindGiftWrap || evt.Kind == snowclaw.KindLegacyDM:
		return classDM
	case evt.Kind == snowclaw.KindDeletion:
		return classDeletion
	case snowclaw.GroupOf(evt) != "":
		return classChat
	}
	return classOther
}

// Refusal reasons are the NIP-01 prefixes of the OK message, by the
// refusal's reason (never its text); the other reasons are "other".
var rejectReasons = [...]string{"invalid", "blocked", "restricted", "duplicate", "rate-limited", "auth-required", "pow", "error", "other"}

const numRejectReasons = len(rejectReasons)

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

func (m *metrics) query(typ int) { m.queries[typ].Add(1) }

// wrote counts the outcome of one pass through the write pipeline (add):
// stored, refused, or neither (a duplicate is skipped without error, an
// ephemeral event is only broadcast).
func (m *metrics) wrote(evt *nostr.Event, skipped bool, err error) {
	switch {
	case err != nil:
		m.rejected[rejectReason(err)].Add(1)
	case !skipped && !nostr.IsEphemeralKind(evt.Kind):
		m.stored[kindClass(evt)].Add(1)
	}
}

// searchBuckets are the upper bounds (seconds) of the search latency
// histogram: from a cached keyword hit to a slow embedder round trip.
var searchBuckets = [...]float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// histogram is a cumulative-at-render Prometheus histogram with fixed
// buckets; each observation lands in exactly one slot.
type histogram struct {
	slots [len(searchBuckets) + 1]atomic.Uint64 // the last is +Inf
	sumNS atomic.Uint64
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(searchBuckets) && s > searchBuckets[i] {
		i++
	}
	h.slots[i].Add(1)
	h.sumNS.Add(uint64(max(d, 0)))
}

// seconds renders a nanosecond sum as seconds without losing the small
// values to float formatting.
func seconds(ns uint64) float64 {
	return math.Round(float64(ns)/1e3) / 1e6
}
