package relay

import (
	"sync"

	"github.com/snowclaw/snowclaw"
)

// registry holds the open connections and their live subscriptions. It
// replaces khatru's listener list, which is read without its lock while
// subscriptions come and go (a data race), matches search filters as if
// they had no search, and can only be changed on a copy.
type registry struct {
	mu      sync.RWMutex
	clients map[*client]map[string][]snowclaw.Filter
}

func newRegistry() *registry {
	return &registry{clients: make(map[*client]map[string][]snowclaw.Filter)}
}

func (g *registry) add(c *client) {
	g.mu.Lock()
	g.clients[c] = make(map[string][]snowclaw.Filter)
	g.mu.Unlock()
}

func (g *registry) remove(c *client) {
	g.mu.Lock()
	delete(g.clients, c)
	g.mu.Unlock()
}

func (g *registry) subscribe(c *client, id string, filters []snowclaw.Filter) {
	g.mu.Lock()
	if subs, ok := g.clients[c]; ok {
		subs[id] = filters
	}
	g.mu.Unlock()
}

func (g *registry) unsubscribe(c *client, id string) {
	g.mu.Lock()
	if subs, ok := g.clients[c]; ok {
		delete(subs, id)
	}
	g.mu.Unlock()
}

func (g *registry) count(c *client) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.clients[c])
}

// has reports whether c has subscription id open.
func (g *registry) has(c *client, id string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.clients[c][id]
	return ok
}

// open is the number of open subscriptions on every connection.
func (g *registry) open() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := 0
	for _, subs := range g.clients {
		n += len(subs)
	}
	return n
}

func (g *registry) all() []*client {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*client, 0, len(g.clients))
	for c := range g.clients {
		out = append(out, c)
	}
	return out
}

// delivery is one EVENT frame to send.
type delivery struct {
	c   *client
	sub string
}

// broadcast sends evt to every subscription whose filters match and whose
// reader may see it (the same rule as stored reads). It returns how many
// subscriptions got it.
func (r *Relay) broadcast(evt *snowclaw.Event) int {
	if evt.Expired(r.now()) {
		return 0
	}
	var out []delivery
	r.subs.mu.RLock()
	for c, subs := range r.subs.clients {
		for id, filters := range subs {
			if r.matchesLive(filters, evt) {
				out = append(out, delivery{c, id})
			}
		}
	}
	r.subs.mu.RUnlock()
	n := 0
	readable := make(map[*client]bool)
	for _, d := range out {
		ok, seen := readable[d.c]
		if !seen {
			ok, _ = r.vis.CanRead(d.c.reader(), evt)
			readable[d.c] = ok
		}
		if ok {
			d.c.deliverEvent(d.sub, evt.Event)
			n++
		}
	}
	return n
}

// matchesLive is NIP-01 matching, and for search filters the rest of the
// filter plus the search itself, parsed when the REQ came (go-nostr's
// Matches ignores search).
func (r *Relay) matchesLive(filters []snowclaw.Filter, evt *snowclaw.Event) bool {
	for _, f := range filters {
		if !f.Filter.Matches(evt.Event) {
			continue
		}
		if f.Search == nil || r.search != nil && r.search.MatchLive(*f.Search, evt) {
			return true
		}
	}
	return false
}
