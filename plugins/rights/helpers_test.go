package rights

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// newKey returns a fresh secret key, its hex pubkey and its npub.
func newKey(t *testing.T) (sk, pk, npub string) {
	t.Helper()
	sk = nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	npub, err = nip19.EncodePublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return sk, pk, npub
}

// fakeID is a stable 64-hex event id for a label.
func fakeID(label string) string {
	sum := sha256.Sum256([]byte(label))
	return hex.EncodeToString(sum[:])
}

func heldText(id, text string) held {
	return held{evt: &nostr.Event{ID: id, Kind: 30078}, text: text}
}

func startsWith(s, p string) bool { return strings.HasPrefix(s, p) }
