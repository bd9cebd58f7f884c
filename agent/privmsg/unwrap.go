package privmsg

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

// Unwrap opens a kind 1059 gift wrap addressed (p tag) to the holder of
// secret and returns the chat message inside.
//
// It checks, in order: the wrap's id and signature, the p tag, the seal
// (kind 13) and its signature, and that the rumor's author is the seal's
// signer. nip59.GiftUnwrap is not used because it overwrites the rumor's
// pubkey with the seal's, which hides exactly the forgery that the last
// check is there to catch. Only kind 14 rumors are accepted; a valid
// rumor of another kind gives ErrUnsupportedKind.
func Unwrap(ctx context.Context, wrap *nostr.Event, secret string) (Message, error) {
	if err := ctx.Err(); err != nil {
		return Message{}, err
	}
	sk, pk, err := keyPair(secret)
	if err != nil {
		return Message{}, err
	}
	if wrap == nil {
		return Message{}, invalid("no event")
	}
	if wrap.Kind != nostr.KindGiftWrap {
		return Message{}, invalid("event %s is kind %d, not a gift wrap (%d)", short(wrap.ID), wrap.Kind, nostr.KindGiftWrap)
	}
	if !slices.Contains(pTags(wrap.Tags), pk) {
		return Message{}, fmt.Errorf("privmsg: gift wrap %s: %w %s", short(wrap.ID), ErrNotForUs, short(pk))
	}
	if !wrap.CheckID() {
		return Message{}, invalid("gift wrap %s: id does not match its content", short(wrap.ID))
	}
	if ok, _ := wrap.CheckSignature(); !ok {
		return Message{}, invalid("gift wrap %s: bad signature", short(wrap.ID))
	}

	seal, err := decryptEvent(wrap.Content, wrap.PubKey, sk)
	if err != nil {
		return Message{}, invalid("gift wrap %s: seal: %v", short(wrap.ID), err)
	}
	if seal.Kind != nostr.KindSeal {
		return Message{}, invalid("gift wrap %s: seal is kind %d, not %d", short(wrap.ID), seal.Kind, nostr.KindSeal)
	}
	if ok, _ := seal.CheckSignature(); !ok {
		return Message{}, invalid("gift wrap %s: seal has a bad signature", short(wrap.ID))
	}

	rumor, err := decryptEvent(seal.Content, seal.PubKey, sk)
	if err != nil {
		return Message{}, invalid("gift wrap %s: rumor: %v", short(wrap.ID), err)
	}
	if rumor.PubKey != seal.PubKey {
		return Message{}, fmt.Errorf("privmsg: gift wrap %s: %w: rumor claims %s, seal signed by %s",
			short(wrap.ID), ErrImpersonation, short(rumor.PubKey), short(seal.PubKey))
	}
	// The id is what replies point at; one that does not hash to the
	// content cannot be referred to consistently.
	if rumor.ID == "" {
		rumor.ID = rumor.GetID()
	} else if !rumor.CheckID() {
		return Message{}, invalid("gift wrap %s: rumor id does not match its content", short(wrap.ID))
	}
	if rumor.Kind != KindChat {
		return Message{}, fmt.Errorf("privmsg: gift wrap %s: %w %d (only %d is handled)", short(wrap.ID), ErrUnsupportedKind, rumor.Kind, KindChat)
	}

	return Message{
		From:      rumor.PubKey,
		To:        pTags(rumor.Tags),
		Content:   rumor.Content,
		Kind:      rumor.Kind,
		ID:        rumor.ID,
		CreatedAt: rumor.CreatedAt,
		Tags:      rumor.Tags,
		WrapID:    wrap.ID,
	}, nil
}

// decryptEvent NIP-44-decrypts ciphertext exchanged with the holder of
// pubkey and parses the event inside.
func decryptEvent(ciphertext, pubkey, sk string) (nostr.Event, error) {
	var ev nostr.Event
	if !nostr.IsValidPublicKey(pubkey) {
		return ev, fmt.Errorf("invalid public key %q", short(pubkey))
	}
	ck, err := nip44.GenerateConversationKey(pubkey, sk)
	if err != nil {
		return ev, fmt.Errorf("conversation key: %v", err)
	}
	plain, err := nip44.Decrypt(ciphertext, ck)
	if err != nil {
		return ev, fmt.Errorf("decrypt: %v", err)
	}
	if err := json.Unmarshal([]byte(plain), &ev); err != nil {
		return ev, fmt.Errorf("not an event: %v", err)
	}
	return ev, nil
}

// short abbreviates an id or key for messages.
func short(s string) string {
	if len(s) > 16 {
		return s[:16]
	}
	return s
}
