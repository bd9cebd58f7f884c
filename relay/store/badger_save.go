package store

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	badgerstore "github.com/fiatjaf/eventstore/badger"
	"github.com/nbd-wtf/go-nostr"
)

// badgerSave stores evt in b exactly as eventstore's SaveEvent does (v0.16
// badger/save.go, helpers.go, internal/binary/hybrid.go): the same
// duplicate check, the same raw value, the same index keys, byte for byte,
// so eventstore's own reads and its DeleteEvent (which recomputes the keys
// to remove them) keep working on what we wrote. It exists for one reason:
// eventstore's encoder allocates and zeroes 64 KB for every event whatever
// its size (`make([]byte, …+65536…)`), which on the ingest path was 7% of
// the relay's CPU and most of its garbage, so the index's heap was marked
// again every few hundred events. No release of eventstore fixes it and
// the encoder is internal, so here every key and the value share one
// allocation of the exact size. TestBadgerSave_SameBytes holds it to
// eventstore's output; a backend configured with the tag hooks this does
// not implement goes through eventstore.
//
// It returns the event's position in the store's order (store.Sequencer),
// from its serial.
func badgerSave(b *badgerstore.BadgerBackend, evt *nostr.Event) (int64, error) {
	if evt.CreatedAt > math.MaxUint32 || evt.Kind > math.MaxUint16 {
		return 0, fmt.Errorf("event with values out of expected boundaries")
	}
	if len(evt.ID) != 64 || len(evt.PubKey) != 64 || len(evt.Sig) > 128 {
		return 0, errMalformed
	}
	var serial []byte
	err := b.Update(func(txn *badger.Txn) error {
		var id [8]byte
		if _, err := hex.Decode(id[:], []byte(evt.ID[:16])); err != nil {
			return errMalformed
		}
		prefix := []byte{badgerIDPrefix, id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7]}
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		if it.Seek(prefix); it.ValidForPrefix(prefix) {
			return eventstore.ErrDupEvent
		}
		serial = b.Serial()
		return writeBadger(txn, serial, evt)
	})
	if err != nil {
		return 0, err
	}
	return serialPosition(binary.BigEndian.Uint32(serial[1:])), nil
}

// serialPosition is a badger serial as a position: one more, since a
// position of 0 means none (the store's first serial is 0).
func serialPosition(serial uint32) int64 { return int64(serial) + 1 }

// errMalformed: an id or pubkey that is not 32 bytes of hex, which
// eventstore's key builder would panic on.
var errMalformed = errors.New("store: event id, pubkey or sig is not hex of the right length")

// badgerIDPrefix is the index of ids: 2|id[:8]|serial(4).
const badgerIDPrefix byte = 2

// writeBadger sets evt's raw value under serial and its index keys.
func writeBadger(txn *badger.Txn, serial []byte, evt *nostr.Event) error {
	tags := indexedTags(evt)
	size, err := rawSize(evt)
	if err != nil {
		return err
	}
	keys := 1 + 8 + 4 + // id
		1 + 8 + 4 + 4 + // pubkey, created_at
		1 + 2 + 4 + 4 + // kind, created_at
		1 + 8 + 2 + 4 + 4 + // pubkey, kind, created_at
		1 + 4 + 4 // created_at
	for _, p := range tags {
		keys += len(p) + 4 + 4
	}
	buf := make([]byte, 0, size+keys)
	at, idx := uint32(evt.CreatedAt), serial[1:]
	var pk [8]byte
	hex.Decode(pk[:], []byte(evt.PubKey[:16]))
	var id [8]byte
	hex.Decode(id[:], []byte(evt.ID[:16]))
	kind := uint16(evt.Kind)

	buf = appendRaw(buf, evt)
	if err := txn.Set(serial, buf[:size:size]); err != nil {
		return err
	}
	// key appends one key to buf and returns it, its capacity clipped so
	// that nothing later writes into a key badger holds
	key := func(parts ...[]byte) []byte {
		start := len(buf)
		for _, p := range parts {
			buf = append(buf, p...)
		}
		return buf[start:len(buf):len(buf)]
	}
	var atb, kb [4]byte
	binary.BigEndian.PutUint32(atb[:], at)
	binary.BigEndian.PutUint16(kb[:2], kind)
	set := [][]byte{
		key([]byte{badgerIDPrefix}, id[:], idx),
		key([]byte{badgerPubkeyPrefix}, pk[:], atb[:], idx),
		key([]byte{badgerKindPrefix}, kb[:2], atb[:], idx),
		key([]byte{badgerPubkeyKindPrefix}, pk[:], kb[:2], atb[:], idx),
	}
	for _, p := range tags {
		set = append(set, key(p, atb[:], idx))
	}
	set = append(set, key([]byte{badgerCreatedAtPrefix}, atb[:], idx))
	for _, k := range set {
		if err := txn.Set(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// indexedTags are the tag index prefixes eventstore writes for evt, in
// its order: one-letter tags with a value of 1 to 100 bytes, a value
// indexed once whatever tag carries it first.
func indexedTags(evt *nostr.Event) [][]byte {
	var out [][]byte
	for i, tag := range evt.Tags {
		if len(tag) < 2 || len(tag[0]) != 1 || len(tag[1]) == 0 || len(tag[1]) > 100 {
			continue
		}
		if slices.IndexFunc(evt.Tags, func(t nostr.Tag) bool { return len(t) >= 2 && t[1] == tag[1] }) != i {
			continue
		}
		out = append(out, writtenTagPrefix(tag[1]))
	}
	return out
}

// writtenTagPrefix is eventstore's getTagIndexPrefix, quirks included:
// unlike the reader's tagPrefix it keeps a hex value's first 32 bytes even
// when the decoding failed after them (a 65-character value), because
// that is what eventstore wrote and its DeleteEvent looks for.
func writtenTagPrefix(v string) []byte {
	if kind, pk, d, ok := addressParts(v); ok {
		p := binary.BigEndian.AppendUint16([]byte{badgerTagAddrPrefix}, kind)
		return append(append(p, pk[:8]...), d...)
	}
	if b, _ := hex.DecodeString(v); len(b) == 32 {
		return append([]byte{badgerTag32Prefix}, b[:8]...)
	}
	return append([]byte{badgerTagPrefix}, v...)
}

// rawSize is the length of evt's raw value, or eventstore's refusal of
// an event its format cannot hold.
func rawSize(evt *nostr.Event) (int, error) {
	if len(evt.Content) > math.MaxUint16 {
		return 0, fmt.Errorf("content is too large: %d, max is %d", len(evt.Content), math.MaxUint16)
	}
	if len(evt.Tags) > math.MaxUint16 {
		return 0, fmt.Errorf("can't encode too many tags: %d, max is %d", len(evt.Tags), math.MaxUint16)
	}
	n := badgerRawHeader + 2 + len(evt.Content) + 2
	for _, tag := range evt.Tags {
		if len(tag) > math.MaxUint8 {
			return 0, fmt.Errorf("can't encode a tag with so many items: %d, max is %d", len(tag), math.MaxUint8)
		}
		n++
		for _, item := range tag {
			if len(item) > math.MaxUint16 {
				return 0, fmt.Errorf("tag item is too large: %d, max is %d", len(item), math.MaxUint16)
			}
			n += 2 + len(item) + 1
		}
	}
	return n, nil
}

// appendRaw appends eventstore's raw value of evt (decodeEvent reads it):
// id, pubkey, sig, created_at, kind, the content with its length, the
// tag count, and each tag as its item count and items, every item as its
// length, its bytes and a zero.
func appendRaw(buf []byte, evt *nostr.Event) []byte {
	var fixed [badgerRawHeader]byte
	hex.Decode(fixed[0:32], []byte(evt.ID))
	hex.Decode(fixed[32:64], []byte(evt.PubKey))
	hex.Decode(fixed[64:128], []byte(evt.Sig))
	binary.BigEndian.PutUint32(fixed[128:132], uint32(evt.CreatedAt))
	binary.BigEndian.PutUint16(fixed[132:134], uint16(evt.Kind))
	buf = append(buf, fixed[:]...)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(evt.Content)))
	buf = append(buf, evt.Content...)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(evt.Tags)))
	for _, tag := range evt.Tags {
		buf = append(buf, uint8(len(tag)))
		for _, item := range tag {
			buf = binary.BigEndian.AppendUint16(buf, uint16(len(item)))
			buf = append(buf, item...)
			buf = append(buf, 0)
		}
	}
	return buf
}

// SaveEvent stores evt; in badger without eventstore's 64 KB per event
// (badgerSave).
func (s *Exact) SaveEvent(ctx context.Context, evt *nostr.Event) error {
	_, err := s.SaveSequenced(ctx, evt)
	return err
}

// SaveSequenced is Sequencer's: evt stored, and its position.
func (s *Exact) SaveSequenced(ctx context.Context, evt *nostr.Event) (int64, error) {
	switch st := s.Store.(type) {
	case *badgerstore.BadgerBackend:
		if st.IndexLongerTag == nil && st.SkipIndexingTag == nil {
			return badgerSave(st, evt)
		}
	case Sequencer:
		return st.SaveSequenced(ctx, evt)
	}
	return 0, s.Store.SaveEvent(ctx, evt)
}
