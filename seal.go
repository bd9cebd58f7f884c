package snowclaw

import (
	"errors"
	"fmt"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
)

var (
	// ErrDecrypt: the content is encrypted for a conversation the key
	// is not part of, or is corrupt.
	ErrDecrypt = errors.New("cannot decrypt")
	// ErrForged: a private memory whose signature does not make it its p
	// person's (Event.Person): neither the agent nor that person wrote it,
	// so it is nobody's memory and is never opened as one.
	ErrForged = errors.New("private memory not signed by the agent or its person")
)

// Encrypted memories and the agent's records are NIP-44 conversations
// between two keys (docs/events.md): a private one between the agent and its
// person, an internal one between the agent and itself. Seal and Open are
// the one rule of who talks to whom; every reader of such content (the
// agent, the views, the export, the search index) opens it here.

// Seal encrypts plain from the holder of secret (hex) to peer (hex): with
// peer = the holder itself only the holder can read it.
func Seal(plain, secret, peer string) (string, error) {
	key, err := nip44.GenerateConversationKey(peer, secret)
	if err != nil {
		return "", fmt.Errorf("nip44 key with %s: %w", NpubOf(peer), err)
	}
	out, err := nip44.Encrypt(plain, key)
	if err != nil {
		return "", fmt.Errorf("nip44 encrypt: %w", err)
	}
	return out, nil
}

// Open returns the plain content of evt as the holder of secret (hex)
// reads it; content not marked encrypted is returned as it is. agent is
// the agent's pubkey (hex), whose signature makes a private memory its
// person's. person names whom evt is about when the caller knows it
// better than the p tag (the agent's record of someone: its d tag); ""
// takes the person from Event.Person.
//
// The holder pairs its secret with the other side of the conversation:
// the author when someone else wrote it; the agent when a person opens
// what they wrote; the person, then the holder itself, when the holder
// wrote it (records the agent once encrypted to itself are still read:
// docs/events.md#older-forms-still-read). A private memory Event.Person
// refuses is ErrForged, and never opened.
func Open(evt *Event, secret, agent, person string) (string, error) {
	if !evt.Encrypted {
		return evt.Content, nil
	}
	if evt.GroupSealed {
		// no conversation of the agent's: the group's key opens it (OpenGroup)
		return "", ErrNoGroupKey
	}
	if secret == "" {
		return "", fmt.Errorf("%w: no secret key", ErrDecrypt)
	}
	holder, err := nostr.GetPublicKey(secret)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrDecrypt, err)
	}
	if evt.Tier == TierPrivate {
		p, ok := evt.Person(agent)
		if !ok {
			return "", ErrForged
		}
		if person == "" {
			person = p
		}
	}
	for _, peer := range peersOf(evt.PubKey, holder, agent, person) {
		var key [32]byte
		if key, err = nip44.GenerateConversationKey(peer, secret); err != nil {
			continue
		}
		var plain string
		if plain, err = nip44.Decrypt(evt.Content, key); err == nil {
			return plain, nil
		}
	}
	return "", fmt.Errorf("%w (encrypted for another key?): %v", ErrDecrypt, err)
}

// peersOf lists, in the order to try, the keys whose conversation with
// holder may have sealed an event by author (see Open).
func peersOf(author, holder, agent, person string) []string {
	switch {
	case author != "" && author != holder:
		return []string{author}
	case agent != "" && holder != agent:
		return []string{agent} // a person's own memory, written to the agent
	case person != "" && person != holder:
		return []string{person, holder}
	}
	return []string{holder}
}
