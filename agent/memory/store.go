package memory

import (
	"slices"
	"sync"
	"time"

	"github.com/snowclaw/snowclaw"
)

// Options configures a Store.
type Options struct {
	MaxItems   int    // long-term items kept; 0 means 500
	MaxLessons int    // lessons kept; 0 means 200
	NameCache  int    // profile names of people without a record kept in RAM; 0 means DefaultNameCache
	Owner      string // owner pubkey (hex or npub); marks the owner's Npub record
	Now        func() time.Time
}

// Store holds the agent's memory records in RAM. It is safe for concurrent
// use; one mutex guards everything, since every operation is a few map
// lookups and turns must see a consistent picture. Getters return deep
// copies so callers can never mutate, or race on, the store's slices.
type Store struct {
	mu      sync.Mutex
	opts    Options
	npubs   map[string]*Npub
	groups  map[string]*Group
	items   map[string]*Item
	lessons map[string]*Lesson
	names   *nameCache // names of people without a record (see SeeName)

	dirty   map[ref]Key
	removed []Key
	stamps  map[ref]int64   // created_at of the event a record was loaded from
	ruled   map[string]bool // topics the owner's rulings hold (ruled.go)
}

// NewStore makes an empty store.
func NewStore(o Options) *Store {
	if o.MaxItems <= 0 {
		o.MaxItems = 500
	}
	if o.MaxLessons <= 0 {
		o.MaxLessons = 200
	}
	if o.NameCache <= 0 {
		o.NameCache = DefaultNameCache
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if pk, err := snowclaw.ParsePubkey(o.Owner); err == nil {
		o.Owner = pk
	}
	return &Store{
		opts:    o,
		npubs:   map[string]*Npub{},
		groups:  map[string]*Group{},
		items:   map[string]*Item{},
		lessons: map[string]*Lesson{},
		names:   newNameCache(o.NameCache),
		dirty:   map[ref]Key{},
		stamps:  map[ref]int64{},
	}
}

func (s *Store) now() int64 { return s.opts.Now().Unix() }

// Dirty is the number of records changed since they were last taken.
func (s *Store) Dirty() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dirty)
}

// TakeDirty returns the keys of the changed records and clears the set. The
// flusher encodes each with Record; on a failed publish it calls MarkDirty.
func (s *Store) TakeDirty() []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Key, 0, len(s.dirty))
	for _, k := range s.dirty {
		out = append(out, k)
	}
	clear(s.dirty)
	sortKeys(out)
	return out
}

// MarkDirty queues a record for the next flush again. A key whose record
// has been removed in the meantime is ignored: its deletion is pending.
func (s *Store) MarkDirty(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if full, ok := s.keyLocked(ref{k.Kind, k.ID}); ok {
		s.markDirtyLocked(full)
	}
}

// Removed returns the records removed since the last call (forgotten,
// compacted away, deleted, dropped), whose events must be deleted with
// NIP-09, and clears the list.
func (s *Store) Removed() []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.removed
	s.removed = nil
	return out
}

// Record returns a copy of the record a key names, ready for Encode.
func (s *Store) Record(k Key) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch k.Kind {
	case KindNpub:
		if n, ok := s.npubs[k.ID]; ok {
			c := n.clone()
			return Record{Npub: &c}, true
		}
	case KindGroup:
		if g, ok := s.groups[k.ID]; ok {
			c := g.clone()
			return Record{Group: &c}, true
		}
	case KindItem:
		if it, ok := s.items[k.ID]; ok {
			c := *it
			return Record{Item: &c}, true
		}
	case KindLesson:
		if l, ok := s.lessons[k.ID]; ok {
			c := *l
			return Record{Lesson: &c}, true
		}
	}
	return Record{}, false
}

// Load applies a record decoded from a stored event without marking it
// dirty: it is already on the relay. The newer version wins (items and
// lessons by UpdatedAt, then event created_at; people and groups by
// created_at), and a record with unflushed changes in RAM is kept as is,
// since those changes are newer than anything stored.
func (s *Store) Load(rec Record) {
	if rec.count() != 1 {
		return
	}
	if rec.Npub != nil {
		pk, err := snowclaw.ParsePubkey(rec.Npub.Pubkey)
		if err != nil {
			return
		}
		n := rec.Npub.clone()
		n.Pubkey = pk
		rec.Npub = &n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := rec.Key()
	r := ref{k.Kind, k.ID}
	if _, dirty := s.dirty[r]; dirty || k.ID == "" {
		return
	}
	stamp, seen := s.stamps[r]
	older := seen && rec.CreatedAt < stamp
	switch {
	case rec.Npub != nil:
		if older {
			return
		}
		n := rec.Npub.clone()
		if s.opts.Owner != "" {
			n.IsOwner = n.Pubkey == s.opts.Owner
		}
		s.npubs[n.Pubkey] = &n
	case rec.Group != nil:
		if older {
			return
		}
		g := rec.Group.clone()
		s.groups[g.ID] = &g
	case rec.Item != nil:
		it := *rec.Item
		if it.Valid() != nil || it.Topic == "" {
			return
		}
		if old, ok := s.items[it.ID]; ok && (it.UpdatedAt < old.UpdatedAt || it.UpdatedAt == old.UpdatedAt && older) {
			return
		}
		s.items[it.ID] = &it
	case rec.Lesson != nil:
		l := *rec.Lesson
		if l.Unscoped() || l.Valid() != nil {
			// whose words it holds is unknown: shown nowhere, and its
			// event goes (see Lesson.Unscoped)
			s.markRemovedLocked(k)
			return
		}
		if old, ok := s.lessons[l.ID]; ok && (l.UpdatedAt < old.UpdatedAt || l.UpdatedAt == old.UpdatedAt && older) {
			return
		}
		s.lessons[l.ID] = &l
	}
	s.stamps[r] = rec.CreatedAt
}

// keyLocked returns the full key of a record the store holds.
func (s *Store) keyLocked(r ref) (Key, bool) {
	switch r.kind {
	case KindNpub:
		_, ok := s.npubs[r.id]
		return keyOf(KindNpub, r.id, ""), ok
	case KindGroup:
		_, ok := s.groups[r.id]
		return keyOf(KindGroup, r.id, ""), ok
	case KindItem:
		if it, ok := s.items[r.id]; ok {
			return keyOf(KindItem, r.id, it.Topic), true
		}
	case KindLesson:
		_, ok := s.lessons[r.id]
		return keyOf(KindLesson, r.id, ""), ok
	}
	return Key{}, false
}

// markDirtyLocked queues k for publishing. A record written again after
// being removed must not also be deleted: the deletion would be published
// after the new version and take it down too.
func (s *Store) markDirtyLocked(k Key) {
	s.dirty[ref{k.Kind, k.ID}] = k
	s.removed = slices.DeleteFunc(s.removed, func(x Key) bool { return x.Kind == k.Kind && x.ID == k.ID })
}

func (s *Store) markRemovedLocked(k Key) {
	r := ref{k.Kind, k.ID}
	delete(s.dirty, r)
	delete(s.stamps, r)
	if !slices.ContainsFunc(s.removed, func(x Key) bool { return x.Kind == k.Kind && x.ID == k.ID }) {
		s.removed = append(s.removed, k)
	}
}

func sortKeys(ks []Key) {
	slices.SortFunc(ks, func(a, b Key) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}
