package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/nbd-wtf/go-nostr"
)

// defaultEvalSeed is eval's --seed when none is given: a fixed value, so
// that two runs of one command agree.
const defaultEvalSeed = "snowclaw-eval"

// evalKeys derives eval's secret keys from a seed. Fresh random keys made
// every run differ: ranking ties (the turns of one session borrow the same
// score) are broken by event id, and the id hashes the author's key.
type evalKeys string

// secret is the key named label: SHA-256 of seed, label and a counter,
// the counter moving on in the (negligible) case that the hash is not a
// valid secp256k1 scalar.
func (k evalKeys) secret(label string) string {
	for i := 0; ; i++ {
		h := sha256.Sum256([]byte(string(k) + "\x00" + label + "\x00" + strconv.Itoa(i)))
		sk := hex.EncodeToString(h[:])
		if _, err := nostr.GetPublicKey(sk); err == nil {
			return sk
		}
	}
}
