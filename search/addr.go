package search

import (
	"hash/maphash"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// addrKey is a doc's address (Doc.Address) made of the doc's own strings
// (its author interned, its d tag): it costs no allocation where the
// address text would cost one per doc.
type addrKey struct {
	kind      int
	pubkey, d string
}

// addrOf is d's address key, false when d has no address.
func addrOf(d *Doc) (addrKey, bool) {
	if d.D == "" || !nostr.IsAddressableKind(d.Kind) {
		return addrKey{}, false
	}
	return addrKey{d.Kind, d.Pubkey, d.D}, true
}

// parseAddrKey reads an address written by snowclaw.Address.
func parseAddrKey(address string) (addrKey, error) {
	kind, pubkey, d, err := snowclaw.ParseAddress(address)
	return addrKey{kind, pubkey, d}, err
}

// addrIndex is the ids of the docs indexed at each address. Nearly every
// address holds one version, so it is keyed by the address's hash and
// holds that one id inline; a hash shared by two docs (versions of one
// address, or two addresses that collide) moves to more. Keyed by
// addrKey with a []string each, it took 150 MB at a million memories;
// this takes about a third. Callers tell colliding addresses apart by
// the docs themselves (state.versionsAt).
type addrIndex struct {
	seed maphash.Seed
	one  map[uint64]string
	more map[uint64][]string
}

func newAddrIndex() addrIndex {
	return addrIndex{seed: maphash.MakeSeed(), one: make(map[uint64]string), more: make(map[uint64][]string)}
}

func (x *addrIndex) hash(k addrKey) uint64 { return maphash.Comparable(x.seed, k) }

func (x *addrIndex) add(k addrKey, id string) {
	h := x.hash(k)
	if ids, ok := x.more[h]; ok {
		x.more[h] = append(ids, id)
	} else if first, ok := x.one[h]; ok {
		delete(x.one, h)
		x.more[h] = []string{first, id}
	} else {
		x.one[h] = id
	}
}

func (x *addrIndex) remove(k addrKey, id string) {
	h := x.hash(k)
	if x.one[h] == id {
		delete(x.one, h)
		return
	}
	ids := x.more[h]
	if i := slices.Index(ids, id); i >= 0 {
		ids = slices.Delete(ids, i, i+1)
	}
	switch len(ids) {
	case 0:
		delete(x.more, h)
	case 1:
		delete(x.more, h)
		x.one[h] = ids[0]
	default:
		x.more[h] = ids
	}
}

// each calls f with every id whose address has k's hash, until f says
// stop; the caller checks each doc's address.
func (x *addrIndex) each(k addrKey, f func(id string) bool) {
	h := x.hash(k)
	if id, ok := x.one[h]; ok {
		f(id)
		return
	}
	for _, id := range x.more[h] {
		if !f(id) {
			return
		}
	}
}

// versionsAt calls f with each doc indexed at k until f says stop.
func (s *state) versionsAt(k addrKey, f func(d *Doc) bool) {
	s.versions.each(k, func(id string) bool {
		d := s.docs[id]
		if o, ok := addrOf(d); d == nil || !ok || o != k {
			return true // another address with the same hash
		}
		return f(d)
	})
}
