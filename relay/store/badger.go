package store

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/nbd-wtf/go-nostr"
)

// The badger backend's layout (eventstore v0.16 badger/lib.go, helpers.go,
// save.go): the raw event under 0|serial(4), and its indexes
//
//	1|created_at(4)|serial(4)
//	3|kind(2)|created_at(4)|serial(4)
//	4|pubkey[:8]|created_at(4)|serial(4)
//	5|pubkey[:8]|kind(2)|created_at(4)|serial(4)
//	6|value|created_at(4)|serial(4)             a plain tag value
//	7|value[:8]|created_at(4)|serial(4)         a 32-byte hex value
//	8|kind(2)|pubkey[:8]|d|created_at(4)|serial(4) an address
//
// Every index range is a prefix followed by created_at and serial, so one
// walker serves them all; inside a second the keys run in serial
// (insertion) order, and the serial is the position of a cursor. The raw
// value starts with id(32) pubkey(32) sig(64) created_at(4) kind(2).
// TestBadgerLayout checks all of it against the real backend.
const (
	badgerRawPrefix        byte = 0
	badgerCreatedAtPrefix  byte = 1
	badgerKindPrefix       byte = 3
	badgerPubkeyPrefix     byte = 4
	badgerPubkeyKindPrefix byte = 5
	badgerTagPrefix        byte = 6
	badgerTag32Prefix      byte = 7
	badgerTagAddrPrefix    byte = 8
	badgerRawHeader             = 134

	// maxPrefixes bounds the author and kind ranges merged for one
	// query; beyond it a wider index is walked and the header does the
	// filtering.
	maxPrefixes = 64
)

// badgerPager pages the badger backend by walking its indexes itself:
// badger's own QueryEvents is ordered by created_at alone, and its tag
// ranges hold every value the wanted one is a prefix of (the values have
// no terminator), so its answers can be neither resumed nor trusted.
type badgerPager struct{ b *badgerstore.BadgerBackend }

// maxLimitOf is the most events one query of store returns, 0 when
// unknown: a store that caps a query silently makes a cut page look like
// the last one.
func maxLimitOf(store eventstore.Store) int {
	switch s := store.(type) {
	case *badgerstore.BadgerBackend:
		return s.MaxLimit
	case *slicestore.SliceStore:
		return s.MaxLimit
	case interface{ MaxQueryLimit() int }:
		return s.MaxQueryLimit()
	}
	return 0
}

// QueryPage walks the ranges of the index plan picks for f, all merged
// newest first by (created_at, serial), from just below the cursor down
// to f.Since. Ids, kinds and authors are checked on the raw header and
// the rest by f.Matches, so a page reads what it returns plus what the
// filter rejects (impostors of a tag value among them), and holds at most
// limit events.
func (p badgerPager) QueryPage(ctx context.Context, f nostr.Filter, after Cursor, limit int) ([]*nostr.Event, Cursor, error) {
	if limit <= 0 {
		limit = PageSize
	}
	if f.IDs != nil {
		return idsPage(ctx, p.b, p.b.MaxLimit, f, after, limit)
	}
	var out []*nostr.Event
	var next Cursor
	err := p.walk(ctx, f, after, func(evt *nostr.Event, at, serial uint32) bool {
		if out = append(out, evt); len(out) == limit {
			next = Cursor{CreatedAt: nostr.Timestamp(at), ID: evt.ID, Pos: fmt.Sprintf("%08x", serial)}
			return false
		}
		return true
	})
	if err != nil {
		return nil, Cursor{}, err
	}
	return out, next, nil
}

// walk hands fn every match of f below the cursor, newest first by
// (created_at, serial), until fn returns false. f.IDs is not looked at
// (QueryPage answers those from the id index).
func (p badgerPager) walk(ctx context.Context, f nostr.Filter, after Cursor, fn func(evt *nostr.Event, at, serial uint32) bool) error {
	ranges := plan(f)
	lo, top, ok := bounds(f, after)
	if len(ranges) == 0 || !ok {
		return nil
	}
	authors := hexSet(f.Authors)
	match := f
	match.Limit = 0
	return p.b.View(func(txn *badger.Txn) error {
		walk := newMerge(txn, ranges, top, lo)
		defer walk.close()
		raw := []byte{badgerRawPrefix, 0, 0, 0, 0}
		for at, serial, ok := walk.next(); ok; at, serial, ok = walk.next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			binary.BigEndian.PutUint32(raw[1:], serial)
			item, err := txn.Get(raw)
			if err == badger.ErrKeyNotFound {
				continue // deleted under us
			} else if err != nil {
				return err
			}
			var evt *nostr.Event
			if err := item.Value(func(v []byte) error {
				if len(v) < badgerRawHeader || binary.BigEndian.Uint32(v[128:132]) != at ||
					(authors != nil && !authors[string(v[32:64])]) ||
					(f.Kinds != nil && !slices.Contains(f.Kinds, int(binary.BigEndian.Uint16(v[132:134])))) {
					return nil
				}
				evt = &nostr.Event{}
				return decodeEvent(v, evt)
			}); err != nil {
				return err
			}
			if evt == nil || !match.Matches(evt) {
				continue
			}
			if !fn(evt, at, serial) {
				return nil
			}
		}
		return nil
	})
}

// bounds are the lowest created_at f admits and the highest (created_at,
// serial) key suffix a page starts at; false when nothing is left.
func bounds(f nostr.Filter, after Cursor) (lo uint32, top [8]byte, ok bool) {
	hiTS, hiSerial := uint64(math.MaxUint32), uint64(math.MaxUint32)
	if f.Until != nil {
		if *f.Until < 0 {
			return 0, top, false
		}
		hiTS = min(hiTS, uint64(*f.Until))
	}
	if !after.IsZero() {
		if after.CreatedAt < 0 {
			return 0, top, false
		}
		cts, cs := min(uint64(after.CreatedAt), math.MaxUint32), uint64(math.MaxUint32)
		if after.Pos != "" {
			b, err := hex.DecodeString(after.Pos)
			if err != nil || len(b) != 4 {
				return 0, top, false
			}
			cs = uint64(binary.BigEndian.Uint32(b))
			if cs == 0 { // the second is done; go on below it
				if cts == 0 {
					return 0, top, false
				}
				cts, cs = cts-1, math.MaxUint32
			} else {
				cs--
			}
		}
		if cts < hiTS || (cts == hiTS && cs < hiSerial) {
			hiTS, hiSerial = cts, cs
		}
	}
	if f.Since != nil && *f.Since > 0 {
		if uint64(*f.Since) > hiTS {
			return 0, top, false
		}
		lo = uint32(*f.Since)
	}
	binary.BigEndian.PutUint32(top[:4], uint32(hiTS))
	binary.BigEndian.PutUint32(top[4:], uint32(hiSerial))
	return lo, top, true
}

// merge walks several index ranges together, newest (created_at, serial)
// first, each event once.
type merge struct {
	rs   []*rangeWalk
	last uint64
	done bool // last is set
}

func newMerge(txn *badger.Txn, prefixes [][]byte, top [8]byte, lo uint32) *merge {
	m := &merge{}
	for _, p := range prefixes {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: p})
		r := &rangeWalk{it: it, prefix: p, lo: lo}
		it.Seek(append(slices.Clip(p), top[:]...))
		r.settle()
		m.rs = append(m.rs, r)
	}
	return m
}

// next is the next (created_at, serial) of any range.
func (m *merge) next() (uint32, uint32, bool) {
	for {
		var best *rangeWalk
		for _, r := range m.rs {
			if r.ok && (best == nil || r.cur > best.cur) {
				best = r
			}
		}
		if best == nil {
			return 0, 0, false
		}
		cur := best.cur
		best.it.Next()
		best.settle()
		if m.done && cur == m.last {
			continue // in two ranges (two of its tag values wanted)
		}
		m.last, m.done = cur, true
		return uint32(cur >> 32), uint32(cur), true
	}
}

func (m *merge) close() {
	for _, r := range m.rs {
		r.it.Close()
	}
}

// rangeWalk is one index range. A key belongs to it only when exactly
// created_at and serial follow the prefix: tag values have no terminator,
// so the range of "hid" also holds the keys of "hidopen", "hid2" and,
// when a created_at happens to start with the right bytes, "hi".
type rangeWalk struct {
	it     *badger.Iterator
	prefix []byte
	lo     uint32
	cur    uint64 // created_at<<32 | serial
	ok     bool
}

// settle moves the iterator onto the next key of the range itself.
func (r *rangeWalk) settle() {
	for r.it.Valid() {
		rest := r.it.Item().Key()[len(r.prefix):]
		switch {
		case len(rest) == 8:
			at := binary.BigEndian.Uint32(rest)
			if r.ok = at >= r.lo; r.ok {
				r.cur = uint64(at)<<32 | uint64(binary.BigEndian.Uint32(rest[4:]))
			}
			return
		case len(rest) > 8:
			// A longer value's key. Every key of ours below it has
			// created_at|serial <= rest[:8], so the walk jumps there,
			// past all the longer values sharing those bytes, and ends
			// when they are already older than since.
			if binary.BigEndian.Uint32(rest) < r.lo {
				r.ok = false
				return
			}
			r.it.Seek(append(slices.Clip(r.prefix), rest[:8]...))
		default:
			r.it.Next()
		}
	}
	r.ok = false
}

// idsPage answers an ids filter: one query (a few for more ids than the
// store answers at once) holds every match, ids being unique, ordered by
// created_at and id.
func idsPage(ctx context.Context, store eventstore.Store, maxN int, f nostr.Filter, after Cursor, limit int) ([]*nostr.Event, Cursor, error) {
	ids := make([]string, 0, len(f.IDs))
	for _, id := range f.IDs {
		if len(id) == 64 { // badger fails a whole query on any other
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if maxN <= 0 {
		maxN = len(ids)
	}
	var raw []*nostr.Event
	for chunk := range slices.Chunk(ids, max(maxN, 1)) {
		q := nostr.Filter{IDs: chunk, Limit: len(chunk)}
		ch, err := store.QueryEvents(ctx, q)
		if err != nil {
			return nil, Cursor{}, err
		}
		raw = append(raw, collect(ch)...)
	}
	q := f
	q.Limit = 0
	all := keep(q, raw)
	if !after.IsZero() {
		i := slices.IndexFunc(all, func(e *nostr.Event) bool {
			return e.CreatedAt < after.CreatedAt || (e.CreatedAt == after.CreatedAt && e.ID < after.ID)
		})
		if i < 0 {
			i = len(all)
		}
		all = all[i:]
	}
	if len(all) <= limit {
		return all, Cursor{}, nil
	}
	last := all[limit-1]
	return all[:limit], Cursor{CreatedAt: last.CreatedAt, ID: last.ID}, nil
}

// hexSet is the raw bytes of 32-byte hex values, as map keys; nil for a
// nil list.
func hexSet(vals []string) map[string]bool {
	if vals == nil {
		return nil
	}
	m := make(map[string]bool, len(vals))
	for _, v := range vals {
		if b, err := hex.DecodeString(v); err == nil && len(b) == 32 {
			m[string(b)] = true
		}
	}
	return m
}
