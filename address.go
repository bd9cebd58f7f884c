package snowclaw

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrAddress matches (errors.Is) every *AddressError.
var ErrAddress = errors.New("not a kind:pubkey:d address")

// AddressError says why a text is not a NIP-01 "kind:pubkey:d" address.
type AddressError struct {
	Address string
	Why     string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("%q is not a kind:pubkey:d address: %s", e.Address, e.Why)
}

func (e *AddressError) Is(target error) bool { return target == ErrAddress }

// Address is the NIP-01 address "kind:pubkey:d" of an addressable or
// replaceable event (d is "" for the latter). Every a tag and every
// address key is built here, so a key written by one part of the relay is
// found by another.
func Address(kind int, pubkey, d string) string {
	return strconv.Itoa(kind) + ":" + pubkey + ":" + d
}

// ParseAddress splits an address built by Address. The d tag may itself
// contain colons (every snowclaw d does), so only the first two split.
// The kind must be written as Address writes it (no sign, no leading
// zeros): a text that two parsers could read as different kinds would let
// a deletion act under one reading and be judged under the other. The
// pubkey is not checked, only split off: callers compare it with the key
// they trust, and some must still recognise a malformed one.
func ParseAddress(s string) (kind int, pubkey, d string, err error) {
	k, rest, ok := strings.Cut(s, ":")
	if !ok {
		return 0, "", "", &AddressError{Address: s, Why: "no colon"}
	}
	pubkey, d, ok = strings.Cut(rest, ":")
	if !ok {
		return 0, "", "", &AddressError{Address: s, Why: "want two colons"}
	}
	kind, err = strconv.Atoi(k)
	if err != nil || kind < 0 || strconv.Itoa(kind) != k {
		return 0, "", "", &AddressError{Address: s, Why: "the kind is not a decimal number"}
	}
	return kind, pubkey, d, nil
}
