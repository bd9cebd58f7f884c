package memory

import "github.com/hashicorp/golang-lru/v2/simplelru"

// DefaultNameCache is how many profile names of people without a record
// the store keeps by default.
const DefaultNameCache = 4096

// nameCache is a bounded LRU of display names seen in kind 0 profiles of
// people the agent has no record of. Anyone can publish a profile from a
// fresh key, so a profile alone never creates a record
// (docs/agent.md#records-of-people-and-groups); the name waits here, in RAM
// only and never persisted, until the person interacts with the agent,
// and the least recently seen names are dropped beyond the cap. The
// Store's lock guards it, hence the library's unlocked LRU.
type nameCache struct {
	lru *simplelru.LRU[string, cachedName] // hex pubkey → latest name
}

type cachedName struct {
	name string
	at   int64
}

// newNameCache holds up to max names; max must be positive (Options
// defaults it).
func newNameCache(max int) *nameCache {
	lru, err := simplelru.NewLRU[string, cachedName](max, nil)
	if err != nil {
		panic(err) // only a size below 1, which Options never lets through
	}
	return &nameCache{lru: lru}
}

// put remembers pk's latest name; an older profile than the one held is
// ignored, as the relay would keep the newer one, but still counts as
// pk seen.
func (c *nameCache) put(pk, name string, at int64) {
	if cn, ok := c.lru.Get(pk); ok && at < cn.at {
		return
	}
	c.lru.Add(pk, cachedName{name: name, at: at})
}

// take removes and returns pk's cached name: once the person has a
// record, the record holds it.
func (c *nameCache) take(pk string) (cachedName, bool) {
	cn, ok := c.lru.Peek(pk)
	if ok {
		c.lru.Remove(pk)
	}
	return cn, ok
}

func (c *nameCache) len() int { return c.lru.Len() }

// CachedNames is how many names of people without a record are held.
func (s *Store) CachedNames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names.len()
}
