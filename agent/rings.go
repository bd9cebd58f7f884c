package agent

import (
	"strings"

	"github.com/snowclaw/snowclaw/agent/memory"
)

// ring returns the buffer of a group (or of a private conversation),
// created at the size the config resolves to.
func (a *Agent) ring(key string) *memory.Ring {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.rings[key]
	if !ok {
		r = memory.NewRing(a.ringSize(key))
		a.rings[key] = r
	}
	return r
}

// ringSize resolves context_history for a buffer. A group's buffer holds
// what its group scope asks for; a person's setting narrows what their
// prompt shows (turn.history), not the shared buffer.
func (a *Agent) ringSize(key string) int {
	group, person := ringOwner(key)
	return a.cfg.Resolve(person, group).ContextHistory
}

// ringOwner is whose conversation a buffer holds: a group's (person ""),
// or a person's private one (group "").
func ringOwner(key string) (group, person string) {
	if pk, ok := strings.CutPrefix(key, "dm:"); ok {
		return "", pk
	}
	return key, ""
}

// resizeRings applies a config change to every buffer at once.
func (a *Agent) resizeRings() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, r := range a.rings {
		if n := a.ringSize(key); n != r.Cap() {
			r.Resize(n)
		}
	}
}

// History returns the buffered messages of a group ("dm:<hex>" for a
// private conversation), oldest first.
func (a *Agent) History(key string) []memory.HistoryMessage {
	a.mu.Lock()
	r, ok := a.rings[key]
	a.mu.Unlock()
	if !ok {
		return nil
	}
	return r.Messages()
}

// allRings is every conversation buffer, copied out of the map so callers
// can work on them without holding a.mu (each ring has its own lock).
func (a *Agent) allRings() []*memory.Ring {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*memory.Ring, 0, len(a.rings))
	for _, r := range a.rings {
		out = append(out, r)
	}
	return out
}
