// Package nostrsig checks a Nostr event's id and BIP-340 signature with
// the answers of go-nostr's CheckID and CheckSignature, for less work per
// event: the event is serialized and hashed once (go-nostr does it once
// for the id and again for the signature), and an author's key is lifted
// onto the curve once and kept (go-nostr's path does the square root of
// lift_x twice for every event: in ParsePubKey and again inside btcec's
// Verify, which re-parses the key it was given). A relay hears the same
// few authors over and over, so on group chat ingest this is a tenth of
// the signature check. The curve arithmetic is btcec's; only the
// verification steps of BIP-340 after lift_x are written here, because
// btcec offers no verification from an already parsed key.
// FuzzVerifier_SameAnswers holds it to go-nostr.
package nostrsig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/nbd-wtf/go-nostr"
)

// The two ways an event fails the check.
var (
	ErrID        = errors.New("event id is not the hash of its content")
	ErrSignature = errors.New("signature does not verify")
)

// Verifier checks events; it is safe for concurrent use. Its key cache
// holds at most max keys: a publisher of many throwaway keys only evicts
// others, whose next event then pays the lift again, as every event did
// before.
type Verifier struct {
	mu   sync.Mutex
	keys map[[32]byte]*btcec.PublicKey
	max  int
}

// New is a Verifier keeping at most size authors' keys (at least one).
func New(size int) *Verifier {
	return &Verifier{keys: make(map[[32]byte]*btcec.PublicKey), max: max(size, 1)}
}

// Check is nil when evt's id is the hash of its serialization and its
// signature verifies under its pubkey; else ErrID or ErrSignature.
func (v *Verifier) Check(evt *nostr.Event) error {
	if len(evt.ID) != 64 {
		return ErrID
	}
	h := sha256.Sum256(evt.Serialize())
	const hextable = "0123456789abcdef"
	for i, b := range h {
		if evt.ID[2*i] != hextable[b>>4] || evt.ID[2*i+1] != hextable[b&0x0f] {
			return ErrID
		}
	}
	var pkb [32]byte
	var sig [64]byte
	if len(evt.PubKey) != 64 || len(evt.Sig) != 128 {
		return ErrSignature
	}
	if _, err := hex.Decode(pkb[:], []byte(evt.PubKey)); err != nil {
		return ErrSignature
	}
	if _, err := hex.Decode(sig[:], []byte(evt.Sig)); err != nil {
		return ErrSignature
	}
	pk, ok := v.key(pkb)
	if !ok || !verify(h[:], &sig, pk, pkb[:]) {
		return ErrSignature
	}
	return nil
}

// key is the author's key lifted onto the curve (BIP-340 lift_x), from
// the cache when it is there; false when the bytes are no key.
func (v *Verifier) key(pkb [32]byte) (*btcec.PublicKey, bool) {
	v.mu.Lock()
	pk := v.keys[pkb]
	v.mu.Unlock()
	if pk != nil {
		return pk, true
	}
	pk, err := schnorr.ParsePubKey(pkb[:])
	if err != nil {
		return nil, false
	}
	v.mu.Lock()
	if len(v.keys) >= v.max {
		for k := range v.keys { // any one: map order is arbitrary
			delete(v.keys, k)
			break
		}
	}
	v.keys[pkb] = pk
	v.mu.Unlock()
	return pk, true
}

// challengeTag is sha256("BIP0340/challenge"), twice, the prefix of
// BIP-340's tagged hash of the challenge.
var challengeTag = func() []byte {
	t := sha256.Sum256([]byte("BIP0340/challenge"))
	return append(t[:], t[:]...)
}()

// verify is BIP-340's verification from step 3 on, as btcec's
// schnorrVerify does it (which also reduces an s of n or more modulo n
// rather than refusing it, as go-nostr's answers do).
func verify(hash []byte, sig *[64]byte, pk *btcec.PublicKey, pkb []byte) bool {
	var r btcec.FieldVal
	if overflow := r.SetByteSlice(sig[:32]); overflow {
		return false
	}
	var s btcec.ModNScalar
	s.SetByteSlice(sig[32:])
	// e = int(tagged_hash("BIP0340/challenge", r || P || m)) mod n
	hh := sha256.New()
	hh.Write(challengeTag)
	hh.Write(sig[:32])
	hh.Write(pkb)
	hh.Write(hash)
	var c [32]byte
	hh.Sum(c[:0])
	var e btcec.ModNScalar
	e.SetBytes(&c)
	e.Negate()
	// R = s*G - e*P
	var P, R, sG, eP btcec.JacobianPoint
	pk.AsJacobian(&P)
	btcec.ScalarBaseMultNonConst(&s, &sG)
	btcec.ScalarMultNonConst(&e, &P, &eP)
	btcec.AddNonConst(&sG, &eP, &R)
	if (R.X.IsZero() && R.Y.IsZero()) || R.Z.IsZero() {
		return false
	}
	R.ToAffine()
	return !R.Y.IsOdd() && r.Equals(&R.X)
}
