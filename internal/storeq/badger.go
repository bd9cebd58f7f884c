package storeq

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
// save.go): the raw event under 0|serial(4), and among its indexes
//
//	1|created_at(4)|serial(4)
//	3|kind(2)|created_at(4)|serial(4)
//	4|pubkey[:8]|created_at(4)|serial(4)
//	5|pubkey[:8]|kind(2)|created_at(4)|serial(4)
//
// Inside a second the keys run in serial (insertion) order: that is the
// order, and the serial the position, of badger's SecondReader. The raw
// value starts with id(32) pubkey(32) sig(64) created_at(4) kind(2).
// TestBadgerLayout checks all of it against the real backend.
const (
	badgerRawPrefix        byte = 0
	badgerCreatedAtPrefix  byte = 1
	badgerKindPrefix       byte = 3
	badgerPubkeyPrefix     byte = 4
	badgerPubkeyKindPrefix byte = 5
	badgerRawHeader             = 134

	// maxPrefixes bounds the index ranges merged for one second; beyond
	// it a wider index is walked and the header does the filtering.
	maxPrefixes = 64
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

// maxLimitOf is the most events one query of store returns, 0 when
// unknown: a store that caps a query silently makes a cut page look like
// the last one.
func maxLimitOf(store eventstore.Store) int {
	switch s := store.(type) {
	case *badgerstore.BadgerBackend:
		return s.MaxLimit
	case *slicestore.SliceStore:
		return s.MaxLimit
	}
	return 0
}

// candidate is an index entry whose raw header passed the filter.
type candidate struct {
	serial uint32
	id     string
}

// QuerySecond walks the narrowest index ranges for the second (by author
// and kind, by author, by kind, or all of it), newest serial first, from
// just below `after`. Ids, kinds and authors are checked on the raw
// header; the passing events are loaded by id and matched against the
// whole filter in batches, so a call reads about as many entries as it
// returns (plus those its filter's tags reject) and holds at most limit.
func (s badgerSeconds) QuerySecond(ctx context.Context, f nostr.Filter, at nostr.Timestamp, after string, limit int) ([]*nostr.Event, string, error) {
	if at < 0 || at > math.MaxUint32 || limit <= 0 {
		return nil, after, nil
	}
	start := uint32(math.MaxUint32)
	if after != "" {
		b, err := hex.DecodeString(after)
		if err != nil || len(b) != 4 {
			return nil, "", fmt.Errorf("storeq: %q is not a badger position", after)
		}
		if start = binary.BigEndian.Uint32(b); start == 0 {
			return nil, after, nil
		}
		start--
	}
	prefixes := secondPrefixes(f, uint32(at))
	ids, authors := hexSet(f.IDs), hexSet(f.Authors)
	match := f
	match.Since, match.Until, match.Limit = nil, nil, 0

	var out []*nostr.Event
	pos := after
	var batch []candidate
	// flush loads the batch and keeps what matches, in walk order; done
	// when out is full
	flush := func() (bool, error) {
		evs, err := s.load(ctx, batch)
		if err != nil {
			return false, err
		}
		for _, c := range batch {
			if evt := evs[c.id]; evt != nil && match.Matches(evt) {
				out = append(out, evt)
				pos = fmt.Sprintf("%08x", c.serial)
				if len(out) == limit {
					return true, nil
				}
			}
		}
		batch = batch[:0]
		return false, nil
	}
	err := s.b.View(func(txn *badger.Txn) error {
		walk := newMerge(txn, prefixes, start)
		defer walk.close()
		raw := []byte{badgerRawPrefix, 0, 0, 0, 0}
		for serial, ok := walk.next(); ok; serial, ok = walk.next() {
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
			var id string
			if err := item.Value(func(v []byte) error {
				if len(v) < badgerRawHeader || binary.BigEndian.Uint32(v[128:132]) != uint32(at) ||
					(ids != nil && !ids[string(v[0:32])]) ||
					(authors != nil && !authors[string(v[32:64])]) ||
					(f.Kinds != nil && !slices.Contains(f.Kinds, int(binary.BigEndian.Uint16(v[132:134])))) {
					return nil
				}
				id = hex.EncodeToString(v[0:32])
				return nil
			}); err != nil {
				return err
			}
			if id == "" {
				continue
			}
			batch = append(batch, candidate{serial, id})
			if len(batch) >= limit-len(out) {
				if done, err := flush(); done || err != nil {
					return err
				}
			}
		}
		if len(batch) > 0 {
			_, err := flush()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, pos, nil
}

// secondPrefixes are the index ranges holding second `at` for f: the
// narrowest the filter allows, nil when it can match nothing.
func secondPrefixes(f nostr.Filter, at uint32) [][]byte {
	if (f.Kinds != nil && len(f.Kinds) == 0) || (f.Authors != nil && len(f.Authors) == 0) {
		return nil
	}
	var kinds []uint16
	for _, k := range f.Kinds {
		if k >= 0 && k <= math.MaxUint16 {
			kinds = append(kinds, uint16(k))
		}
	}
	slices.Sort(kinds)
	kinds = slices.Compact(kinds)
	var pks [][]byte
	for _, a := range f.Authors {
		if b, err := hex.DecodeString(a); err == nil && len(b) == 32 {
			pks = append(pks, b[:8])
		}
	}
	slices.SortFunc(pks, func(a, b []byte) int { return slices.Compare(a, b) })
	pks = slices.CompactFunc(pks, slices.Equal)
	if (f.Kinds != nil && len(kinds) == 0) || (f.Authors != nil && len(pks) == 0) {
		return nil
	}
	ts := binary.BigEndian.AppendUint32(nil, at)
	var out [][]byte
	switch {
	case len(kinds) > 0 && len(pks) > 0 && len(kinds)*len(pks) <= maxPrefixes:
		for _, pk := range pks {
			for _, k := range kinds {
				p := append([]byte{badgerPubkeyKindPrefix}, pk...)
				p = binary.BigEndian.AppendUint16(p, k)
				out = append(out, append(p, ts...))
			}
		}
	case len(pks) > 0 && len(pks) <= maxPrefixes:
		for _, pk := range pks {
			out = append(out, append(append([]byte{badgerPubkeyPrefix}, pk...), ts...))
		}
	case len(kinds) > 0 && len(kinds) <= maxPrefixes:
		for _, k := range kinds {
			p := binary.BigEndian.AppendUint16([]byte{badgerKindPrefix}, k)
			out = append(out, append(p, ts...))
		}
	default:
		out = [][]byte{append([]byte{badgerCreatedAtPrefix}, ts...)}
	}
	return out
}

// merge walks several index ranges of one second together, highest serial
// first.
type merge struct{ its []*badger.Iterator }

func newMerge(txn *badger.Txn, prefixes [][]byte, start uint32) *merge {
	m := &merge{}
	for _, p := range prefixes {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: p})
		it.Seek(binary.BigEndian.AppendUint32(slices.Clip(p), start))
		m.its = append(m.its, it)
	}
	return m
}

func (m *merge) next() (uint32, bool) {
	best, serial := -1, uint32(0)
	for i, it := range m.its {
		if !it.Valid() {
			continue
		}
		k := it.Item().Key()
		if s := binary.BigEndian.Uint32(k[len(k)-4:]); best < 0 || s > serial {
			best, serial = i, s
		}
	}
	if best < 0 {
		return 0, false
	}
	m.its[best].Next()
	return serial, true
}

func (m *merge) close() {
	for _, it := range m.its {
		it.Close()
	}
}

// load fetches the candidates' events, by id.
func (s badgerSeconds) load(ctx context.Context, cands []candidate) (map[string]*nostr.Event, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	ch, err := s.b.QueryEvents(ctx, nostr.Filter{IDs: ids, Limit: len(ids)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*nostr.Event, len(ids))
	for evt := range ch {
		out[evt.ID] = evt
	}
	return out, nil
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
