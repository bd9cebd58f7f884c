package storeq

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
)

// The badger backend's layout (eventstore v0.16 badger/lib.go, helpers.go,
// save.go): the raw event under 0|serial(4), and among the indexes
// 1|created_at(4)|serial(4) and 3|kind(2)|created_at(4)|serial(4). Index
// keys inside a second are in serial order, so the id order a cursor
// needs is made here. The raw value starts with id(32) pubkey(32) sig(64)
// created_at(4) kind(2); TestBadgerLayout checks all of it.
const (
	badgerRawPrefix       byte = 0
	badgerCreatedAtPrefix byte = 1
	badgerKindPrefix      byte = 3
	badgerRawHeader            = 134
)

// badgerSeconds is the SecondReader of the badger backend.
type badgerSeconds struct{ b *badgerstore.BadgerBackend }

func secondReaderOf(store eventstore.Store) (SecondReader, bool) {
	if sr, ok := store.(SecondReader); ok {
		return sr, true
	}
	if b, ok := store.(*badgerstore.BadgerBackend); ok {
		return badgerSeconds{b}, true
	}
	return nil, false
}

func maxLimitOf(store eventstore.Store) int {
	if b, ok := store.(*badgerstore.BadgerBackend); ok {
		return b.MaxLimit
	}
	return 0
}

// QuerySecond walks the second's index keys (by kind when f names kinds)
// and keeps the n highest ids below the bound in a heap, so memory stays
// at n ids however full the second is; the events are then loaded by id
// and matched against the whole filter. Candidates that fail the tags
// move the bound down and the walk repeats.
func (s badgerSeconds) QuerySecond(ctx context.Context, f nostr.Filter, at nostr.Timestamp, below string, limit int) ([]*nostr.Event, error) {
	if at < 0 || at > math.MaxUint32 || limit <= 0 {
		return nil, nil
	}
	var bound []byte
	if below != "" {
		var err error
		if bound, err = hex.DecodeString(below); err != nil || len(bound) != 32 {
			return nil, nil // no stored id sorts below a malformed one
		}
	}
	match := f
	match.Since, match.Until, match.Limit = nil, nil, 0
	var out []*nostr.Event
	for len(out) < limit {
		cands, complete, err := s.candidates(ctx, f, uint32(at), bound, limit-len(out))
		if err != nil || len(cands) == 0 {
			return out, err
		}
		evs, err := s.load(ctx, cands)
		if err != nil {
			return nil, err
		}
		for _, id := range cands {
			if evt := evs[hex.EncodeToString(id[:])]; evt != nil && match.Matches(evt) {
				out = append(out, evt)
			}
		}
		if complete {
			break
		}
		last := cands[len(cands)-1]
		bound = last[:]
	}
	return out, nil
}

// candidates are up to n ids of second `at` below bound, highest first,
// that pass the checks the raw header allows (ids, kinds, authors);
// complete says the second holds no more.
func (s badgerSeconds) candidates(ctx context.Context, f nostr.Filter, at uint32, bound []byte, n int) ([][32]byte, bool, error) {
	var prefixes [][]byte
	if len(f.Kinds) > 0 {
		kinds := slices.Clone(f.Kinds)
		slices.Sort(kinds)
		for _, k := range slices.Compact(kinds) {
			if k < 0 || k > math.MaxUint16 {
				continue
			}
			p := []byte{badgerKindPrefix}
			p = binary.BigEndian.AppendUint16(p, uint16(k))
			prefixes = append(prefixes, binary.BigEndian.AppendUint32(p, at))
		}
	} else {
		prefixes = [][]byte{binary.BigEndian.AppendUint32([]byte{badgerCreatedAtPrefix}, at)}
	}
	ids := hexSet(f.IDs)
	authors := hexSet(f.Authors)
	top := &idHeap{}
	overflow := false
	err := s.b.View(func(txn *badger.Txn) error {
		raw := make([]byte, 5)
		raw[0] = badgerRawPrefix
		for _, prefix := range prefixes {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			for it.Rewind(); it.Valid(); it.Next() {
				if err := ctx.Err(); err != nil {
					it.Close()
					return err
				}
				key := it.Item().Key()
				copy(raw[1:], key[len(key)-4:])
				item, err := txn.Get(raw)
				if err == badger.ErrKeyNotFound {
					continue // deleted under us
				} else if err != nil {
					it.Close()
					return err
				}
				var id [32]byte
				ok := false
				if err := item.Value(func(v []byte) error {
					if len(v) < badgerRawHeader {
						return nil
					}
					copy(id[:], v[0:32])
					ok = (bound == nil || bytes.Compare(id[:], bound) < 0) &&
						(ids == nil || ids[string(v[0:32])]) &&
						(authors == nil || authors[string(v[32:64])])
					return nil
				}); err != nil {
					it.Close()
					return err
				}
				if !ok {
					continue
				}
				if top.Len() < n {
					heap.Push(top, id)
				} else if bytes.Compare(id[:], (*top)[0][:]) > 0 {
					(*top)[0] = id
					heap.Fix(top, 0)
					overflow = true
				} else {
					overflow = true
				}
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	out := []([32]byte)(*top)
	slices.SortFunc(out, func(a, b [32]byte) int { return bytes.Compare(b[:], a[:]) })
	return out, !overflow, nil
}

// load fetches events by id.
func (s badgerSeconds) load(ctx context.Context, ids [][32]byte) (map[string]*nostr.Event, error) {
	hexIDs := make([]string, len(ids))
	for i, id := range ids {
		hexIDs[i] = hex.EncodeToString(id[:])
	}
	ch, err := s.b.QueryEvents(ctx, nostr.Filter{IDs: hexIDs, Limit: len(hexIDs)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*nostr.Event, len(ids))
	for evt := range ch {
		out[evt.ID] = evt
	}
	return out, nil
}

// hexSet is the raw bytes of hex values, as map keys; nil for no values.
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

// idHeap is a min-heap of ids: the root is the lowest kept, the first to go.
type idHeap [][32]byte

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return bytes.Compare(h[i][:], h[j][:]) < 0 }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.([32]byte)) }
func (h *idHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
