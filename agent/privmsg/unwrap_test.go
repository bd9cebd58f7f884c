package privmsg

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/keyer"
	"github.com/nbd-wtf/go-nostr/nip17"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/nbd-wtf/go-nostr/nip59"
)

// giftWrap builds a wrap with go-nostr's own NIP-59 code, signing the
// seal as signer whatever the rumor claims: the way a forger would.
func giftWrap(t *testing.T, rumor nostr.Event, signer party, recipient string, tweakSeal func(*nostr.Event)) nostr.Event {
	t.Helper()
	ck, err := nip44.GenerateConversationKey(recipient, signer.sk)
	if err != nil {
		t.Fatal(err)
	}
	w, err := nip59.GiftWrap(rumor, recipient,
		func(s string) (string, error) { return nip44.Encrypt(s, ck) },
		func(e *nostr.Event) error {
			if err := e.Sign(signer.sk); err != nil {
				return err
			}
			if tweakSeal != nil {
				tweakSeal(e)
			}
			return nil
		},
		nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func chatRumor(from, to string, kind int) nostr.Event {
	r := nostr.Event{PubKey: from, CreatedAt: nostr.Now(), Kind: kind, Tags: nostr.Tags{{"p", to}}, Content: "hello"}
	r.ID = r.GetID()
	return r
}

func TestUnwrap_Refused(t *testing.T) {
	alice, bob, carol, mallory := newParty(t), newParty(t), newParty(t), newParty(t)
	good := func(t *testing.T) nostr.Event { return mustWrap(t, alice, bob.pk, "hello", nil) }
	tests := []struct {
		name    string
		wrap    func(t *testing.T) *nostr.Event
		secret  string
		wantIs  error
		wantErr string
	}{
		{name: "third key", secret: carol.sk, wantIs: ErrNotForUs,
			wrap: func(t *testing.T) *nostr.Event { w := good(t); return &w }},
		{name: "p tag rewritten to a third key", secret: carol.sk, wantIs: ErrInvalid, wantErr: "decrypt",
			wrap: func(t *testing.T) *nostr.Event {
				w := good(t)
				w.Tags = nostr.Tags{{"p", carol.pk}}
				if err := w.Sign(nostr.GeneratePrivateKey()); err != nil {
					t.Fatal(err)
				}
				return &w
			}},
		{name: "forged author", secret: bob.sk, wantIs: ErrImpersonation,
			wrap: func(t *testing.T) *nostr.Event {
				w := giftWrap(t, chatRumor(alice.pk, bob.pk, KindChat), mallory, bob.pk, nil)
				return &w
			}},
		{name: "content tampered", secret: bob.sk, wantIs: ErrInvalid, wantErr: "id does not match",
			wrap: func(t *testing.T) *nostr.Event {
				w := good(t)
				b := []byte(w.Content)
				b[len(b)/2] ^= 1
				w.Content = string(b)
				return &w
			}},
		{name: "content tampered and re-signed", secret: bob.sk, wantIs: ErrInvalid, wantErr: "decrypt",
			wrap: func(t *testing.T) *nostr.Event {
				w := good(t)
				w.Content = strings.Replace(w.Content, w.Content[40:44], "AAAA", 1)
				if err := w.Sign(nostr.GeneratePrivateKey()); err != nil {
					t.Fatal(err)
				}
				return &w
			}},
		{name: "signature swapped", secret: bob.sk, wantIs: ErrInvalid, wantErr: "bad signature",
			wrap: func(t *testing.T) *nostr.Event {
				w, other := good(t), good(t)
				w.Sig = other.Sig
				return &w
			}},
		{name: "seal signature bad", secret: bob.sk, wantIs: ErrInvalid, wantErr: "seal has a bad signature",
			wrap: func(t *testing.T) *nostr.Event {
				w := giftWrap(t, chatRumor(alice.pk, bob.pk, KindChat), alice, bob.pk,
					func(s *nostr.Event) { s.CreatedAt++ })
				return &w
			}},
		{name: "seal of wrong kind", secret: bob.sk, wantIs: ErrInvalid, wantErr: "seal is kind 1",
			wrap: func(t *testing.T) *nostr.Event {
				w := giftWrap(t, chatRumor(alice.pk, bob.pk, KindChat), alice, bob.pk,
					func(s *nostr.Event) { s.Kind = 1; _ = s.Sign(alice.sk) })
				return &w
			}},
		{name: "rumor id wrong", secret: bob.sk, wantIs: ErrInvalid, wantErr: "rumor id",
			wrap: func(t *testing.T) *nostr.Event {
				r := chatRumor(alice.pk, bob.pk, KindChat)
				r.ID = strings.Repeat("0", 64)
				w := giftWrap(t, r, alice, bob.pk, nil)
				return &w
			}},
		{name: "file message kind 15", secret: bob.sk, wantIs: ErrUnsupportedKind, wantErr: "unsupported rumor kind 15",
			wrap: func(t *testing.T) *nostr.Event {
				w := giftWrap(t, chatRumor(alice.pk, bob.pk, 15), alice, bob.pk, nil)
				return &w
			}},
		{name: "not a gift wrap", secret: bob.sk, wantIs: ErrInvalid, wantErr: "kind 1,",
			wrap: func(t *testing.T) *nostr.Event {
				e := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"p", bob.pk}}, Content: "hi"}
				_ = e.Sign(alice.sk)
				return &e
			}},
		{name: "nil event", secret: bob.sk, wantIs: ErrInvalid,
			wrap: func(t *testing.T) *nostr.Event { return nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Unwrap(context.Background(), tc.wrap(t), tc.secret)
			if err == nil {
				t.Fatalf("accepted: %+v", m)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestUnwrap_BadSecret(t *testing.T) {
	alice, bob := newParty(t), newParty(t)
	w := mustWrap(t, alice, bob.pk, "x", nil)
	secret := strings.Repeat("g", 64)
	_, err := Unwrap(context.Background(), &w, secret)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("err = %v; want an error that does not quote the key", err)
	}
}

// Messages from other NIP-17 clients, as go-nostr's nip17 builds them,
// must open; and ours must open with go-nostr's nip59.
func TestInterop_GoNostr(t *testing.T) {
	ctx := context.Background()
	alice, bob := newParty(t), newParty(t)
	replyTo := strings.Repeat("ef", 32)

	t.Run("nip17.PrepareMessage to Unwrap", func(t *testing.T) {
		kr, err := keyer.NewPlainKeySigner(alice.sk)
		if err != nil {
			t.Fatal(err)
		}
		toUs, toThem, err := nip17.PrepareMessage(ctx, "from another client", nostr.Tags{{"e", replyTo}}, kr, bob.pk, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Unwrap(ctx, &toThem, bob.sk)
		if err != nil {
			t.Fatal(err)
		}
		if m.From != alice.pk || m.Content != "from another client" || m.Tags.FindWithValue("e", replyTo) == nil {
			t.Errorf("got %+v", m)
		}
		self, err := Unwrap(ctx, &toUs, alice.sk)
		if err != nil || self.ID != m.ID {
			t.Errorf("sender's copy: %+v, %v", self, err)
		}
	})

	t.Run("Wrap to nip59.GiftUnwrap", func(t *testing.T) {
		w := mustWrap(t, alice, bob.pk, "from the agent", nostr.Tags{{"e", replyTo}})
		rumor, err := nip59.GiftUnwrap(w, func(pub, ct string) (string, error) {
			ck, err := nip44.GenerateConversationKey(pub, bob.sk)
			if err != nil {
				return "", err
			}
			return nip44.Decrypt(ct, ck)
		})
		if err != nil {
			t.Fatal(err)
		}
		mine, err := Unwrap(ctx, &w, bob.sk)
		if err != nil {
			t.Fatal(err)
		}
		if rumor.PubKey != alice.pk || rumor.Kind != 14 || rumor.Content != "from the agent" || rumor.ID != mine.ID {
			t.Errorf("go-nostr read %+v", rumor)
		}
		if rumor.Sig != "" {
			t.Error("the rumor is signed")
		}
	})
}
