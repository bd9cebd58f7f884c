package remotesearch

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/memsearch"
)

// answer is what one remote returned for a search: verified public
// memories only.
type answer struct {
	r      *remote
	events []*nostr.Event
}

// askAll asks every remote for q at once, each bounded by the timeout,
// and returns the answers that came (a failed remote returns none).
func (l *Layer) askAll(ctx context.Context, q snowclaw.SearchQuery) []answer {
	out := make([]answer, len(l.remotes))
	var wg sync.WaitGroup
	for i, r := range l.remotes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = answer{r: r, events: l.ask(ctx, r, q)}
		}()
	}
	wg.Wait()
	return out
}

// ask returns r's verified answer to q, from the cache when it is there.
// Identical misses at once share one request (singleflight): N readers
// searching the same words while the cache is cold cost the remote one
// REQ, not N, and take one concurrency slot, not N. The shared request
// runs apart from any one caller's context (its own timeout bounds it), so
// a caller that goes away does not fail the others; each caller still
// stops waiting when its own context ends.
func (l *Layer) ask(ctx context.Context, r *remote, q snowclaw.SearchQuery) []*nostr.Event {
	key := r.URL + "\x00" + strconv.Itoa(l.o.PerRemote) + "\x00" + q.String()
	if evs, ok := l.cache.Get(key); ok {
		l.met.cache.WithLabelValues("hit").Inc()
		return evs
	}
	l.met.cache.WithLabelValues("miss").Inc()
	shared := context.WithoutCancel(ctx)
	ch := l.flight.DoChan(key, func() (any, error) {
		// a caller that missed just as the previous flight landed finds
		// its answer here rather than asking again
		if evs, ok := l.cache.Get(key); ok {
			return evs, nil
		}
		evs, ok := l.request(shared, r, func(ctx context.Context, nip50 bool) ([]*nostr.Event, error) {
			fs := filters(q, nip50, l.o.PerRemote)
			got, err := fetchREQ(ctx, r.URL, fs, l.o.PerRemote*len(fs))
			return l.verify(r, got, fs, servable), err
		})
		if ok {
			l.cache.Add(key, evs)
		}
		return evs, nil
	})
	select {
	case res := <-ch:
		evs, _ := res.Val.([]*nostr.Event)
		return evs
	case <-ctx.Done():
		return nil
	}
}

// request runs one exchange with r under its timeout and a concurrency
// slot, after its NIP-11 is known; ok is false when it failed (and r
// rests) or r is resting.
func (l *Layer) request(ctx context.Context, r *remote, do func(ctx context.Context, nip50 bool) ([]*nostr.Event, error)) ([]*nostr.Event, bool) {
	now := l.now()
	r.mu.Lock()
	resting := now.Before(r.downUntil)
	r.mu.Unlock()
	if resting {
		l.met.requests.WithLabelValues(r.URL, "skipped").Inc()
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	start := time.Now()
	evs, err := l.exchange(ctx, r, do)
	took := time.Since(start)
	l.met.result(r.URL, err, took)
	l.note(r, err, took)
	if err != nil {
		if errors.Is(err, errNIP11) {
			l.log.Debug("remote search failed", "remote", r.URL, "err", err) // nipsOf told once
		} else {
			l.log.Warn("remote search failed", "remote", r.URL, "err", err)
		}
		r.mu.Lock()
		r.downUntil = l.now().Add(rest)
		r.mu.Unlock()
		return nil, false
	}
	return evs, true
}

func (l *Layer) exchange(ctx context.Context, r *remote, do func(ctx context.Context, nip50 bool) ([]*nostr.Event, error)) ([]*nostr.Event, error) {
	select {
	case l.slots <- struct{}{}:
		defer func() { <-l.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	nips, err := l.nipsOf(ctx, r)
	if err != nil {
		return nil, err
	}
	return do(ctx, nips[50])
}

// nipsOf is r's supported NIPs, asked once an hour.
func (l *Layer) nipsOf(ctx context.Context, r *remote) (map[int]bool, error) {
	r.mu.Lock()
	nips, at := r.nips, r.nipsAt
	r.mu.Unlock()
	if nips != nil && l.now().Sub(at) < nipsTTL {
		return nips, nil
	}
	// different searches starting at once on a cold remote ask for its
	// NIP-11 once (the key cannot be a cache key: those start with the URL)
	v, err, _ := l.flight.Do("\x00nips\x00"+r.URL, func() (any, error) {
		nips, missing, err := fetchNIPs(ctx, l.o.HTTPClient, r.URL)
		if err != nil {
			l.nipsTrouble(r, "remote relay: its NIP-11 document could not be fetched; searches go on without it", "err", err)
			return nil, err
		}
		if missing != "" {
			l.nipsTrouble(r, "remote relay serves no NIP-11 document; it is searched with the t tag fallback, not NIP-50", "answer", missing)
		}
		r.mu.Lock()
		r.nips, r.nipsAt = nips, l.now()
		r.mu.Unlock()
		return nips, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(map[int]bool), nil
}

// nipsTrouble logs the first NIP-11 problem of r as a warning and every
// later one at debug level: an operator learns of a misconfigured remote
// at its first use, and a remote that stays down does not fill the log.
func (l *Layer) nipsTrouble(r *remote, msg string, args ...any) {
	r.mu.Lock()
	first := !r.nipsTold
	r.nipsTold = true
	r.mu.Unlock()
	args = append([]any{"remote", r.URL}, args...)
	if first {
		l.log.Warn(msg, args...)
	} else {
		l.log.Debug(msg, args...)
	}
}

// servable is what a remote's event must be to be served here at all: a
// memory item that is public by this relay's tier rule, its markers (no
// h, not encrypted: memsearch.RemoteDoc), and by every claim it makes of
// itself. A snow:tier other than public, a p tag or a snow:learnt-from
// tag marks a memory its writer did not mean for everyone (this relay's
// agent writes none of them on a public memory): a remote that holds it
// in plaintext is a leak elsewhere, and serving it on would widen it.
// Where the markers and the claims disagree the narrower reading wins,
// as it does for local events (snowclaw.Event.Tier).
func servable(evt *nostr.Event) bool {
	if _, ok := memsearch.RemoteDoc(evt); !ok {
		return false
	}
	for _, t := range evt.Tags {
		if len(t) == 0 {
			continue
		}
		switch t[0] {
		case "p", snowclaw.TagLearntFrom:
			return false
		case snowclaw.TagTier:
			if len(t) < 2 || t[1] != string(snowclaw.TierPublic) {
				return false
			}
		}
	}
	return true
}

// verify keeps the events whose id and signature hold, that match one of
// the filters sent and that admit says are wanted; each dropped event
// is counted by reason. A remote's answer is not trusted to be what was
// asked for: a forged event, an event outside the filters sent, or one
// that is not public here (admit) are all dropped here.
func (l *Layer) verify(r *remote, evs []*nostr.Event, fs nostr.Filters, admit func(*nostr.Event) bool) []*nostr.Event {
	out := evs[:0]
	seen := map[string]bool{}
	for _, evt := range evs {
		reason := ""
		switch {
		case !evt.CheckID():
			reason = "id"
		case !validSig(evt):
			reason = "signature"
		case !matchesAny(fs, evt):
			reason = "filter"
		case !admit(evt):
			reason = "scope"
		}
		if reason != "" {
			l.met.dropped.WithLabelValues(r.URL, reason).Inc()
			continue
		}
		if !seen[evt.ID] {
			seen[evt.ID] = true
			out = append(out, evt)
		}
	}
	return out
}

func validSig(evt *nostr.Event) bool {
	ok, err := evt.CheckSignature()
	return ok && err == nil
}

// matchesAny: Filter.Matches ignores the search field, which only the
// remote can judge; the rest must hold.
func matchesAny(fs nostr.Filters, evt *nostr.Event) bool {
	for _, f := range fs {
		f.Search = ""
		if f.Matches(evt) {
			return true
		}
	}
	return false
}
