package privmsg

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

type party struct{ sk, pk string }

func newParty(t *testing.T) party {
	t.Helper()
	sk := nostr.GeneratePrivateKey()
	pk, err := nostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	return party{sk, pk}
}

func mustWrap(t *testing.T, from party, to string, content string, tags nostr.Tags) nostr.Event {
	t.Helper()
	w, err := Wrap(context.Background(), from.sk, to, content, tags)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWrapUnwrap_RoundTrip(t *testing.T) {
	alice, bob := newParty(t), newParty(t)
	replyTo := strings.Repeat("ab", 32)
	tests := []struct {
		name     string
		content  string
		tags     nostr.Tags
		wantTags nostr.Tags
	}{
		{name: "plain", content: "hello agent", wantTags: nostr.Tags{{"p", bob.pk}}},
		{name: "reply reference survives", content: "and another thing", tags: nostr.Tags{{"e", replyTo, "", "reply"}},
			wantTags: nostr.Tags{{"e", replyTo, "", "reply"}, {"p", bob.pk}}},
		{name: "p tag given is not doubled", content: "x", tags: nostr.Tags{{"p", bob.pk}, {"subject", "plans"}},
			wantTags: nostr.Tags{{"p", bob.pk}, {"subject", "plans"}}},
		{name: "unicode and quotes", content: "héllo \"wörld\" 🐧\nline two", wantTags: nostr.Tags{{"p", bob.pk}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := nostr.Now()
			w := mustWrap(t, alice, bob.pk, tc.content, tc.tags)
			if w.Kind != nostr.KindGiftWrap || w.PubKey == alice.pk || !slices.Equal(pTags(w.Tags), []string{bob.pk}) {
				t.Errorf("wrap kind %d pubkey %s p %v: want 1059, a one-time key, [bob]", w.Kind, short(w.PubKey), pTags(w.Tags))
			}
			if ok, _ := w.CheckSignature(); !ok || !w.CheckID() {
				t.Error("wrap is not validly signed")
			}
			if w.CreatedAt > nostr.Now() || w.CreatedAt < before-timestampJitter {
				t.Errorf("wrap created_at %d outside [now-2d, now]", w.CreatedAt)
			}
			m, err := Unwrap(context.Background(), &w, bob.sk)
			if err != nil {
				t.Fatal(err)
			}
			if m.From != alice.pk || m.Content != tc.content || m.Kind != KindChat || m.WrapID != w.ID {
				t.Errorf("got %+v", m)
			}
			if !slices.Equal(m.To, []string{bob.pk}) {
				t.Errorf("To = %v, want [bob]", m.To)
			}
			if len(m.Tags) != len(tc.wantTags) {
				t.Fatalf("Tags = %v, want %v", m.Tags, tc.wantTags)
			}
			for i := range m.Tags {
				if !slices.Equal(m.Tags[i], tc.wantTags[i]) {
					t.Errorf("tag %d = %v, want %v", i, m.Tags[i], tc.wantTags[i])
				}
			}
			if m.CreatedAt < before || m.CreatedAt > nostr.Now() {
				t.Errorf("rumor created_at %d is not the real time", m.CreatedAt)
			}
			if len(m.ID) != 64 || m.ID == w.ID {
				t.Errorf("rumor id %q", m.ID)
			}
		})
	}
}

func TestWrap_CallerTagsNotAliased(t *testing.T) {
	alice, bob := newParty(t), newParty(t)
	tags := nostr.Tags{{"e", strings.Repeat("cd", 32)}}
	w := mustWrap(t, alice, bob.pk, "x", tags)
	tags[0][1] = "changed"
	m, err := Unwrap(context.Background(), &w, bob.sk)
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 || m.Tags[0][1] != strings.Repeat("cd", 32) {
		t.Errorf("caller tags %v, rumor tags %v", tags, m.Tags)
	}
}

func TestWrapBoth_SameRumor(t *testing.T) {
	alice, bob := newParty(t), newParty(t)
	toThem, toSelf, err := WrapBoth(context.Background(), alice.sk, bob.pk, "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Unwrap(context.Background(), &toThem, bob.sk)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := Unwrap(context.Background(), &toSelf, alice.sk)
	if err != nil {
		t.Fatal(err)
	}
	if theirs.ID != mine.ID || mine.From != alice.pk || !slices.Equal(mine.To, []string{bob.pk}) {
		t.Errorf("copies differ: %+v vs %+v", theirs, mine)
	}
	if _, err := Unwrap(context.Background(), &toSelf, bob.sk); !errors.Is(err, ErrNotForUs) {
		t.Errorf("bob opened alice's copy: %v", err)
	}
}

func TestWrap_Timestamps(t *testing.T) {
	alice, bob := newParty(t), newParty(t)
	now := nostr.Now()
	spread := false
	for range 20 {
		w := mustWrap(t, alice, bob.pk, "t", nil)
		if w.CreatedAt < now-timestampJitter || w.CreatedAt > nostr.Now() {
			t.Fatalf("created_at %d outside the last two days", w.CreatedAt)
		}
		// Twenty draws all within a minute of now out of two days would
		// mean the time is not randomised.
		if now-w.CreatedAt > 60 {
			spread = true
		}
	}
	if !spread {
		t.Error("wrap created_at is not randomised")
	}
}

func TestWrap_Errors(t *testing.T) {
	alice, bob := newParty(t), newParty(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		secret  string
		to      string
		content string
		wantIs  error
		wantErr string
	}{
		{name: "bad recipient", secret: alice.sk, to: "npub1xyz", content: "x", wantErr: "not a hex public key"},
		{name: "recipient off the curve", secret: alice.sk, to: strings.Repeat("f", 64), content: "x", wantErr: "not a hex public key"},
		{name: "short secret", secret: "abcd", to: bob.pk, content: "x", wantErr: "64 hex characters"},
		{name: "non-hex secret", secret: strings.Repeat("z", 64), to: bob.pk, content: "x", wantErr: "not hex"},
		{name: "zero secret", secret: strings.Repeat("0", 64), to: bob.pk, content: "x", wantErr: "out of range"},
		{name: "too long", secret: alice.sk, to: bob.pk, content: strings.Repeat("a", 41000), wantIs: ErrTooLong},
		{name: "canceled", ctx: canceled, secret: alice.sk, to: bob.pk, content: "x", wantIs: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			_, err := Wrap(ctx, tc.secret, tc.to, tc.content, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if len(tc.secret) > 8 && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error quotes the secret key: %v", err)
			}
		})
	}

	t.Run("largest that fits", func(t *testing.T) {
		w := mustWrap(t, alice, bob.pk, strings.Repeat("a", 40000), nil)
		if m, err := Unwrap(context.Background(), &w, bob.sk); err != nil || len(m.Content) != 40000 {
			t.Errorf("Unwrap: %d bytes, %v", len(m.Content), err)
		}
	})
}
