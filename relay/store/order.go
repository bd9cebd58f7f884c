package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
)

// State that several writers change (NIP-29 group membership) must come
// out the same on every instance and after every restart, so it is
// derived from its events in one total order: the store's own. created_at
// cannot be that order (clients choose it, and many events share a
// second), nor can the order in which an instance happened to hear of
// events. Each store numbers what it saves: PostgreSQL with its change
// log's seq, kept on the event's row too; badger with its serial, the key
// its raw event is kept under. A position says nothing across stores.

// Sequencer is a store that numbers what it saves in its own order.
type Sequencer interface {
	// SaveSequenced stores evt like SaveEvent and returns its position:
	// greater than that of every event whose save had returned before
	// this one began.
	SaveSequenced(ctx context.Context, evt *nostr.Event) (int64, error)
	// EachInOrder calls fn for every stored event matching f (f.Limit is
	// ignored) with its position, lowest position first, until fn
	// returns false. Events stored before the store kept positions have
	// position 0 and come first, oldest created_at first.
	EachInOrder(ctx context.Context, f nostr.Filter, fn func(evt *nostr.Event, pos int64) bool) error
}

// Positioned is an event and its position in its store's order.
type Positioned struct {
	Event *nostr.Event
	Pos   int64
}

// EachInOrder is Sequencer's EachInOrder on store, or, for a store that
// keeps no positions, every match with position 0, oldest first.
func EachInOrder(ctx context.Context, s eventstore.Store, f nostr.Filter, fn func(evt *nostr.Event, pos int64) bool) error {
	if sq, ok := s.(Sequencer); ok {
		return sq.EachInOrder(ctx, f, fn)
	}
	all, err := All(ctx, s, f)
	if err != nil {
		return err
	}
	slices.Reverse(all)
	for _, evt := range all {
		if !fn(evt, 0) {
			return nil
		}
	}
	return nil
}

// EachInOrder is Sequencer's: badger's events by serial, PostgreSQL's by
// seq.
func (s *Exact) EachInOrder(ctx context.Context, f nostr.Filter, fn func(evt *nostr.Event, pos int64) bool) error {
	switch st := s.Store.(type) {
	case *badgerstore.BadgerBackend:
		return badgerInOrder(ctx, st, f, fn)
	case Sequencer:
		return st.EachInOrder(ctx, f, fn)
	}
	return EachInOrder(ctx, s.Store, f, fn)
}

// badgerInOrder reads every match with its serial (the index keys end
// with it) and hands them over sorted by serial. It holds the matches in
// memory: it serves state rebuilt at start, whose events are few next to
// the store.
func badgerInOrder(ctx context.Context, b *badgerstore.BadgerBackend, f nostr.Filter, fn func(*nostr.Event, int64) bool) error {
	var out []Positioned
	if f.IDs != nil {
		evs, err := All(ctx, b, f)
		if err != nil {
			return err
		}
		err = b.View(func(txn *badger.Txn) error {
			for _, evt := range evs {
				pos, err := badgerSerialOf(txn, evt.ID)
				if err != nil {
					return err
				}
				out = append(out, Positioned{evt, pos})
			}
			return nil
		})
		if err != nil {
			return err
		}
	} else {
		err := badgerPager{b}.walk(ctx, f, Cursor{}, func(evt *nostr.Event, _, serial uint32) bool {
			out = append(out, Positioned{evt, serialPosition(serial)})
			return true
		})
		if err != nil {
			return err
		}
	}
	slices.SortFunc(out, func(a, b Positioned) int { return cmp.Compare(a.Pos, b.Pos) })
	for _, p := range out {
		if !fn(p.Event, p.Pos) {
			return nil
		}
	}
	return nil
}

// badgerSerialOf is the serial of the stored event id, from the id index
// (2|id[:8]|serial).
func badgerSerialOf(txn *badger.Txn, id string) (int64, error) {
	var prefix [9]byte
	prefix[0] = badgerIDPrefix
	if len(id) < 16 {
		return 0, errMalformed
	}
	if _, err := hex.Decode(prefix[1:], []byte(id[:16])); err != nil {
		return 0, errMalformed
	}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix[:], PrefetchValues: false})
	defer it.Close()
	for it.Seek(prefix[:]); it.ValidForPrefix(prefix[:]); it.Next() {
		k := it.Item().Key()
		if len(k) == 13 {
			return serialPosition(binary.BigEndian.Uint32(k[9:])), nil
		}
	}
	return 0, nil
}
