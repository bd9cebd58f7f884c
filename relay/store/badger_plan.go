package store

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

// plan picks the index ranges to walk for f the way badger's own planner
// does (eventstore badger/query_planner.go): a tag when it is narrow
// enough or nothing else is named, else author and kind, author, kind, or
// everything. It returns nil when f can match nothing.
func plan(f nostr.Filter) [][]byte {
	if (f.Kinds != nil && len(f.Kinds) == 0) || (f.Authors != nil && len(f.Authors) == 0) {
		return nil
	}
	for _, vals := range f.Tags {
		if vals != nil && len(vals) == 0 {
			return nil
		}
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

	if key, vals, goodness := narrowestTag(f); key != "" && (goodness >= 3 || (len(kinds) == 0 && len(pks) == 0)) {
		// badger indexes only one-letter tags with values of 1 to 100
		// bytes; a filter naming anything else is found through an
		// author or kind when it names one (so that a replaceable
		// address with a long d tag is still found), and otherwise, like
		// badger, not at all
		if indexable(key, vals) || (len(kinds) == 0 && len(pks) == 0) {
			var out [][]byte
			for _, v := range vals {
				if indexable(key, []string{v}) {
					out = append(out, tagPrefix(v))
				}
			}
			slices.SortFunc(out, func(a, b []byte) int { return slices.Compare(a, b) })
			return slices.CompactFunc(out, slices.Equal)
		}
	}

	var out [][]byte
	switch {
	case len(kinds) > 0 && len(pks) > 0 && len(kinds)*len(pks) <= maxPrefixes:
		for _, pk := range pks {
			for _, k := range kinds {
				p := append([]byte{badgerPubkeyKindPrefix}, pk...)
				out = append(out, binary.BigEndian.AppendUint16(p, k))
			}
		}
	case len(pks) > 0 && len(pks) <= maxPrefixes:
		for _, pk := range pks {
			out = append(out, append([]byte{badgerPubkeyPrefix}, pk...))
		}
	case len(kinds) > 0 && len(kinds) <= maxPrefixes:
		for _, k := range kinds {
			out = append(out, binary.BigEndian.AppendUint16([]byte{badgerKindPrefix}, k))
		}
	default:
		out = [][]byte{{badgerCreatedAtPrefix}}
	}
	return out
}

// indexable reports whether badger indexed every one of these values of
// tag key.
func indexable(key string, vals []string) bool {
	if len(key) != 1 {
		return false
	}
	for _, v := range vals {
		if len(v) == 0 || len(v) > 100 {
			return false
		}
	}
	return true
}

// tagPrefix is the index range of one tag value (eventstore badger
// helpers.go getTagIndexPrefix): an address by kind, author and d, a
// 32-byte hex value by its first 8 bytes, anything else as it is.
func tagPrefix(v string) []byte {
	if kind, pk, d, ok := addressParts(v); ok {
		p := binary.BigEndian.AppendUint16([]byte{badgerTagAddrPrefix}, kind)
		return append(append(p, pk[:8]...), d...)
	}
	if b, err := hex.DecodeString(v); err == nil && len(b) == 32 {
		return append([]byte{badgerTag32Prefix}, b[:8]...)
	}
	return append([]byte{badgerTagPrefix}, v...)
}

// addressParts splits kind:pubkey:d as badger does.
func addressParts(v string) (uint16, []byte, string, bool) {
	spl := strings.Split(v, ":")
	if len(spl) != 3 {
		return 0, nil, "", false
	}
	pk, err := hex.DecodeString(spl[1])
	if err != nil || len(pk) != 32 {
		return 0, nil, "", false
	}
	kind, err := strconv.ParseUint(spl[0], 10, 16)
	if err != nil {
		return 0, nil, "", false
	}
	return uint16(kind), pk, spl[2], true
}

// narrowestTag is eventstore's internal.ChooseNarrowestTag (which Go
// does not let us import): the tag badger would walk, and how narrow it
// is. Tags a filter names as null constrain nothing and are skipped.
func narrowestTag(f nostr.Filter) (key string, vals []string, goodness int) {
	for k, v := range f.Tags {
		if v == nil {
			continue
		}
		g := 1 // anything else: too broad, used only when nothing is better
		switch k {
		case "e", "E", "q":
			g = 9
		case "a", "A", "i", "I", "g", "r":
			g = 8
		case "d":
			g = 4
			if len(f.Authors) != 0 {
				g = 7
			}
		case "h", "t", "l", "k", "K":
			g = 6
		case "p":
			g = 2
		}
		if key == "" || g > goodness || (g == goodness && k < key) {
			key, vals, goodness = k, v, g
		}
	}
	if goodness == 1 {
		goodness = 0
	}
	return key, vals, goodness
}
