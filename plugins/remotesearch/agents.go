package remotesearch

import (
	"context"
	"sync"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// Found is an event a remote sent, verified, with the URL it came from.
type Found struct {
	Event  *nostr.Event
	Origin string
}

// Profiles lists the kind 0 profiles the remotes hold (the agent
// directory, docs/api.md#get-apiv1agents, reads the agents among them: those naming snow:model). Each
// remote is asked for its latest profiles once per cache TTL, under the
// same timeout, concurrency limit and verification as a search; a remote
// that fails adds nothing. Where two remotes hold one pubkey's profile
// the newer wins.
func (l *Layer) Profiles(ctx context.Context) []Found {
	var mu sync.Mutex
	best := map[string]Found{}
	var wg sync.WaitGroup
	for _, r := range l.remotes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			evs := l.profilesOf(ctx, r)
			mu.Lock()
			defer mu.Unlock()
			for _, evt := range evs {
				if old, ok := best[evt.PubKey]; !ok || evt.CreatedAt > old.Event.CreatedAt {
					best[evt.PubKey] = Found{Event: evt, Origin: r.URL}
				}
			}
		}()
	}
	wg.Wait()
	out := make([]Found, 0, len(best))
	for _, f := range best {
		out = append(out, f)
	}
	return out
}

func (l *Layer) profilesOf(ctx context.Context, r *remote) []*nostr.Event {
	if evs, ok := l.agents.Get(r.URL); ok {
		l.met.cache.WithLabelValues("hit").Inc()
		return evs
	}
	l.met.cache.WithLabelValues("miss").Inc()
	evs, ok := l.request(ctx, r, func(ctx context.Context, _ bool) ([]*nostr.Event, error) {
		fs := nostr.Filters{{Kinds: []int{snowclaw.KindProfile}, Limit: l.o.PerRemote}}
		got, err := fetchREQ(ctx, r.URL, fs, l.o.PerRemote)
		return l.verify(r, got, fs, func(*nostr.Event) bool { return true }), err
	})
	if ok {
		l.agents.Add(r.URL, evs)
	}
	return evs
}
