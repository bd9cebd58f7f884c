package remotesearch

import (
	"time"
	"unicode/utf8"
)

// A remote is asked only when a search says include:remote, so its health
// is what its last requests said; nothing here probes it. The owner's
// status report (GET /api/v1/status) shows it.

// RemoteStatus is what the layer last learnt of one remote.
type RemoteStatus struct {
	URL   string  `json:"url"`
	Trust float64 `json:"trust"`
	// State: "unasked" (no search has asked it since start), "ok" (its
	// last request was answered), "failing" (its last request failed; it
	// is left out of searches until resting_until, then asked again).
	State string `json:"state"`
	// NIP50: whether its NIP-11 document lists NIP-50 (searched with
	// "search", else by t tags); absent until the document was read.
	NIP50        *bool   `json:"nip50,omitempty"`
	Requests     uint64  `json:"requests"`
	Failures     uint64  `json:"failures"`
	LastOK       int64   `json:"last_ok,omitempty"`       // unix seconds
	LastError    string  `json:"last_error,omitempty"`    // the last failure's reason
	LastErrorAt  int64   `json:"last_error_at,omitempty"` // unix seconds
	LastSeconds  float64 `json:"last_seconds,omitempty"`  // how long the last request took
	RestingUntil int64   `json:"resting_until,omitempty"` // unix seconds, while failing
}

// seen is a remote's request history, under remote.mu.
type seen struct {
	requests, failures uint64
	lastOK, lastErrAt  time.Time
	lastErr            string
	took               time.Duration
	failedLast         bool
}

// maxErrorText bounds a failure's reason in the report: it may quote what
// the remote sent.
const maxErrorText = 300

// note records one request's outcome.
func (l *Layer) note(r *remote, err error, took time.Duration) {
	now := l.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen.requests++
	r.seen.took = took
	r.seen.failedLast = err != nil
	if err == nil {
		r.seen.lastOK = now
		return
	}
	r.seen.failures++
	r.seen.lastErrAt = now
	msg := err.Error()
	if len(msg) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	r.seen.lastErr = msg
}

// Status reports every configured remote, in the layer's order (the
// config lists them sorted by URL).
func (l *Layer) Status() []RemoteStatus {
	now := l.now()
	out := make([]RemoteStatus, 0, len(l.remotes))
	for _, r := range l.remotes {
		r.mu.Lock()
		s := RemoteStatus{URL: r.URL, Trust: r.Trust, State: "unasked", Requests: r.seen.requests, Failures: r.seen.failures,
			LastError: r.seen.lastErr, LastSeconds: r.seen.took.Seconds()}
		if r.nips != nil {
			nip50 := r.nips[50]
			s.NIP50 = &nip50
		}
		if !r.seen.lastOK.IsZero() {
			s.LastOK = r.seen.lastOK.Unix()
		}
		if !r.seen.lastErrAt.IsZero() {
			s.LastErrorAt = r.seen.lastErrAt.Unix()
		}
		switch {
		case r.seen.requests == 0:
		case r.seen.failedLast:
			s.State = "failing"
			if now.Before(r.downUntil) {
				s.RestingUntil = r.downUntil.Unix()
			}
		default:
			s.State = "ok"
		}
		r.mu.Unlock()
		out = append(out, s)
	}
	return out
}
