package privmsg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// maxRumorJSON bounds the serialised rumor. NIP-44 encrypts at most 65535
// bytes, and the seal, which carries the rumor's ciphertext (padded, then
// base64), must itself fit: a rumor of 40960 bytes pads to 40960 and makes
// a seal of about 55 KB, the next padding step (49152) one of over 65535.
const maxRumorJSON = 40960

// timestampJitter is how far back the seal's and the wrap's created_at
// may be set, so that the relay cannot match them to the moment of
// sending (NIP-59 suggests up to two days).
const timestampJitter = 2 * 24 * 60 * 60

// Wrap returns a private message from the holder of secret to the public
// key to (hex): a kind 14 rumor with content, tags and a p tag for to,
// sealed and gift-wrapped to to. The result is signed and ready to
// publish. tags are copied; pass nostr.Tags{{"e", id}} to reply to the
// message with rumor id id.
func Wrap(ctx context.Context, secret string, to string, content string, tags nostr.Tags) (nostr.Event, error) {
	return WrapAt(ctx, secret, to, content, tags, nostr.Now())
}

// WrapAt is Wrap with the rumor written at a given time (replaying a
// conversation, as `snowclaw eval learning` does).
func WrapAt(ctx context.Context, secret string, to string, content string, tags nostr.Tags, at nostr.Timestamp) (nostr.Event, error) {
	toThem, _, err := wrap(ctx, secret, to, content, tags, false, at)
	return toThem, err
}

// WrapBoth is Wrap plus a second wrap of the same rumor addressed to the
// sender, which NIP-17 recommends so that the sender's other clients can
// show the conversation. Publish both.
func WrapBoth(ctx context.Context, secret string, to string, content string, tags nostr.Tags) (toThem, toSelf nostr.Event, err error) {
	return wrap(ctx, secret, to, content, tags, true, nostr.Now())
}

func wrap(ctx context.Context, secret, to, content string, tags nostr.Tags, both bool, at nostr.Timestamp) (toThem, toSelf nostr.Event, err error) {
	if err := ctx.Err(); err != nil {
		return toThem, toSelf, err
	}
	sk, pk, err := keyPair(secret)
	if err != nil {
		return toThem, toSelf, err
	}
	to = strings.ToLower(strings.TrimSpace(to))
	if !nostr.IsValidPublicKey(to) {
		return toThem, toSelf, fmt.Errorf("privmsg: recipient %q is not a hex public key", short(to))
	}
	rumor := newRumor(pk, to, content, tags, at)
	if toThem, err = sealAndWrap(rumor, sk, to); err != nil {
		return toThem, toSelf, err
	}
	if both {
		if toSelf, err = sealAndWrap(rumor, sk, pk); err != nil {
			return nostr.Event{}, toSelf, err
		}
	}
	return toThem, toSelf, nil
}

// newRumor builds the unsigned kind 14 event. Its created_at is the real
// time: only the people who can decrypt it see it.
func newRumor(from, to, content string, tags nostr.Tags, at nostr.Timestamp) nostr.Event {
	rt := make(nostr.Tags, 0, len(tags)+1)
	hasTo := false
	for _, t := range tags {
		if len(t) >= 2 && t[0] == "p" && t[1] == to {
			hasTo = true
		}
		rt = append(rt, slices.Clone(t)) // not t.Clone: go-nostr v0.51's returns nil
	}
	if !hasTo {
		rt = append(rt, nostr.Tag{"p", to})
	}
	r := nostr.Event{
		PubKey:    from,
		CreatedAt: at,
		Kind:      KindChat,
		Tags:      rt,
		Content:   content,
	}
	r.ID = r.GetID()
	return r
}

// sealAndWrap seals rumor with the sender's key sk for recipient and wraps
// the seal with a fresh key, so that the wrap's signer links to nobody.
func sealAndWrap(rumor nostr.Event, sk, recipient string) (nostr.Event, error) {
	rumor.Sig = "" // a signed rumor would be proof of authorship if leaked
	plain := rumor.String()
	if len(plain) > maxRumorJSON {
		return nostr.Event{}, fmt.Errorf("privmsg: %w: %d bytes with its tags, at most %d", ErrTooLong, len(plain), maxRumorJSON)
	}
	ck, err := nip44.GenerateConversationKey(recipient, sk)
	if err != nil {
		return nostr.Event{}, fmt.Errorf("privmsg: seal: conversation key: %v", err)
	}
	sealed, err := nip44.Encrypt(plain, ck)
	if err != nil {
		return nostr.Event{}, fmt.Errorf("privmsg: seal: encrypt: %v", err)
	}
	seal := nostr.Event{
		CreatedAt: jittered(),
		Kind:      nostr.KindSeal,
		Tags:      nostr.Tags{},
		Content:   sealed,
	}
	// Sign's errors quote the secret key, so they are not passed on.
	if err := seal.Sign(sk); err != nil {
		return nostr.Event{}, errors.New("privmsg: seal: signing failed")
	}

	// GeneratePrivateKey returns "" if the system's randomness fails.
	ephemeral := nostr.GeneratePrivateKey()
	if len(ephemeral) != 64 {
		return nostr.Event{}, errors.New("privmsg: wrap: cannot generate a one-time key")
	}
	ck, err = nip44.GenerateConversationKey(recipient, ephemeral)
	if err != nil {
		return nostr.Event{}, fmt.Errorf("privmsg: wrap: conversation key: %v", err)
	}
	wrapped, err := nip44.Encrypt(seal.String(), ck)
	if err != nil {
		return nostr.Event{}, fmt.Errorf("privmsg: wrap: encrypt: %v", err)
	}
	gw := nostr.Event{
		CreatedAt: jittered(),
		Kind:      nostr.KindGiftWrap,
		Tags:      nostr.Tags{{"p", recipient}},
		Content:   wrapped,
	}
	if err := gw.Sign(ephemeral); err != nil {
		return nostr.Event{}, errors.New("privmsg: wrap: signing failed")
	}
	return gw, nil
}

// jittered returns now moved back by a random amount up to
// timestampJitter. math/rand/v2's generator is seeded from the system's
// randomness, which is enough to hide a send time.
func jittered() nostr.Timestamp {
	return nostr.Now() - nostr.Timestamp(rand.Int64N(timestampJitter+1))
}
