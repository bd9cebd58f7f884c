package search

import (
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// addrKey is a doc's address (Doc.Address) as the index keys its
// versions: the strings are the doc's own (its author interned, its d
// tag), so a key costs no allocation where the address text would cost
// one per doc.
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
