package memory

import "container/list"

// DefaultNameCache is how many profile names of people without a record
// the store keeps by default.
const DefaultNameCache = 4096

// nameCache is a bounded LRU of display names seen in kind 0 profiles of
// people the agent has no record of. Anyone can publish a profile from a
// fresh key, so a profile alone never creates a record
// (docs/agent.md#records-of-people-and-groups); the name waits here, in RAM
// only and never persisted, until the person interacts with the agent,
// and the least recently seen names are dropped beyond the cap.
type nameCache struct {
	max   int
	order *list.List               // front: most recently seen
	byPK  map[string]*list.Element // hex pubkey → element holding a cachedName
}

type cachedName struct {
	pk, name string
	at       int64
}

func newNameCache(max int) *nameCache {
	return &nameCache{max: max, order: list.New(), byPK: map[string]*list.Element{}}
}

// put remembers pk's latest name; an older profile than the one held is
// ignored, as the relay would keep the newer one.
func (c *nameCache) put(pk, name string, at int64) {
	if e, ok := c.byPK[pk]; ok {
		if cn := e.Value.(*cachedName); at >= cn.at {
			cn.name, cn.at = name, at
		}
		c.order.MoveToFront(e)
		return
	}
	c.byPK[pk] = c.order.PushFront(&cachedName{pk: pk, name: name, at: at})
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.byPK, old.Value.(*cachedName).pk)
	}
}

// take removes and returns pk's cached name: once the person has a
// record, the record holds it.
func (c *nameCache) take(pk string) (cachedName, bool) {
	e, ok := c.byPK[pk]
	if !ok {
		return cachedName{}, false
	}
	c.order.Remove(e)
	delete(c.byPK, pk)
	return *e.Value.(*cachedName), true
}

func (c *nameCache) len() int { return c.order.Len() }

// CachedNames is how many names of people without a record are held.
func (s *Store) CachedNames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names.len()
}
