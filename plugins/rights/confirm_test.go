package rights

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestConfirmations_Take(t *testing.T) {
	_, alice, aliceNpub := newKey(t)
	_, bob, _ := newKey(t)
	tests := []struct {
		name    string
		subject string
		op      string
		token   func(tok string) string
		advance time.Duration
		wantErr error
	}{
		{"right token", alice, OpDestroy, same, 0, nil},
		{"subject as npub", aliceNpub, OpDestroy, same, 0, nil},
		{"token with spaces and upper case", alice, OpDestroy, func(s string) string { return " " + strings.ToUpper(s) + "\n" }, 0, nil},
		{"just before expiry", alice, OpDestroy, same, 5*time.Minute - time.Second, nil},
		{"someone else's token", bob, OpDestroy, same, 0, ErrTokenNotYours},
		{"wrong op", alice, OpForget, same, 0, ErrTokenWrongOp},
		{"expired", alice, OpDestroy, same, 5 * time.Minute, ErrTokenExpired},
		{"unknown", alice, OpDestroy, func(string) string { return "0123456789abcdef" }, 0, ErrTokenUnknown},
		{"empty", alice, OpDestroy, func(string) string { return "" }, 0, ErrTokenUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)}
			c := NewConfirmations(5*time.Minute, clock.now)
			p := c.Issue(Pending{Subject: alice, Op: OpDestroy, IDs: []string{fakeID("a")}})
			if len(p.Token) != 16 || !isHex(p.Token) {
				t.Fatalf("token %q is not 16 hex characters", p.Token)
			}
			if !p.Expires.Equal(clock.t.Add(5 * time.Minute)) {
				t.Errorf("Expires = %v", p.Expires)
			}
			clock.t = clock.t.Add(tc.advance)

			got, err := c.Take(tc.subject, tc.op, tc.token(p.Token))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Take err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				for _, leak := range []string{alice, aliceNpub, OpDestroy} {
					if tc.wantErr == ErrTokenNotYours && strings.Contains(err.Error(), leak) {
						t.Errorf("refusal to another person reveals %q: %v", leak, err)
					}
				}
				return
			}
			if got.Token != p.Token || got.Subject != alice || len(got.IDs) != 1 {
				t.Errorf("Take = %+v, want the issued pending", got)
			}
			if _, err := c.Take(tc.subject, tc.op, p.Token); !errors.Is(err, ErrTokenUnknown) {
				t.Errorf("second Take err = %v, want ErrTokenUnknown (one use)", err)
			}
		})
	}
}

func same(s string) string { return s }

func TestConfirmations_RefusalKeepsTokenForOwner(t *testing.T) {
	_, alice, _ := newKey(t)
	_, bob, _ := newKey(t)
	c := NewConfirmations(0, nil)
	p := c.Issue(Pending{Subject: alice, Op: OpForget, Selector: Selector{Query: "tea"}})
	if _, err := c.Take(bob, OpForget, p.Token); !errors.Is(err, ErrTokenNotYours) {
		t.Fatalf("bob: %v", err)
	}
	if _, err := c.Take(alice, OpDestroy, p.Token); !errors.Is(err, ErrTokenWrongOp) {
		t.Fatalf("wrong op: %v", err)
	}
	got, err := c.Take(alice, OpForget, p.Token)
	if err != nil || got.Selector.Query != "tea" {
		t.Errorf("owner Take after refusals = %+v, %v", got, err)
	}
}

func TestConfirmations_IssueReplacesSameSubjectAndOp(t *testing.T) {
	_, alice, _ := newKey(t)
	_, bob, _ := newKey(t)
	c := NewConfirmations(time.Minute, nil)
	first := c.Issue(Pending{Subject: alice, Op: OpForget, IDs: []string{fakeID("1")}})
	other := c.Issue(Pending{Subject: alice, Op: OpDestroy})
	bobs := c.Issue(Pending{Subject: bob, Op: OpForget})
	second := c.Issue(Pending{Subject: alice, Op: OpForget, IDs: []string{fakeID("2")}})
	if first.Token == second.Token {
		t.Fatal("reissue kept the token")
	}
	if _, err := c.Take(alice, OpForget, first.Token); !errors.Is(err, ErrTokenUnknown) {
		t.Errorf("superseded token: err = %v, want ErrTokenUnknown", err)
	}
	tests := []struct {
		name    string
		subject string
		op      string
		token   string
	}{
		{"latest forget", alice, OpForget, second.Token},
		{"destroy untouched", alice, OpDestroy, other.Token},
		{"bob untouched", bob, OpForget, bobs.Token},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Take(tc.subject, tc.op, tc.token); err != nil {
				t.Errorf("Take: %v", err)
			}
		})
	}
}

func TestConfirmations_IssueCopiesSlices(t *testing.T) {
	_, alice, _ := newKey(t)
	c := NewConfirmations(time.Minute, nil)
	ids := []string{fakeID("1")}
	p := c.Issue(Pending{Subject: alice, Op: OpForget, IDs: ids})
	ids[0] = fakeID("changed")
	got, err := c.Take(alice, OpForget, p.Token)
	if err != nil || got.IDs[0] != fakeID("1") {
		t.Errorf("pending changed through the caller's slice: %v, %v", got.IDs, err)
	}
}
