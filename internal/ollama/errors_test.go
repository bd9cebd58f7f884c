package ollama

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/ollama/ollama/api"
)

// TestTransient pins which failures each kind of request retries: the two
// clients this package replaced differed only in timeouts.
func TestTransient(t *testing.T) {
	cases := []struct {
		name        string
		err         error
		chat, embed bool
	}{
		{"HTTP 500", api.StatusError{StatusCode: 500}, true, true},
		{"HTTP 429", api.StatusError{StatusCode: 429}, true, true},
		{"HTTP 404", api.StatusError{StatusCode: 404}, false, false},
		{"unauthorized", api.AuthorizationError{StatusCode: 401}, false, false},
		{"refused", syscall.ECONNREFUSED, true, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true, true},
		{"cut short", io.ErrUnexpectedEOF, true, true},
		{"stream without done", errIncomplete, true, true},
		{"attempt timeout", fmt.Errorf("%w: %w", ErrTimeout, errors.New("deadline")), false, true},
		{"other", errors.New("boom"), false, false},
	}
	for _, tc := range cases {
		if got := opChat.transient(tc.err); got != tc.chat {
			t.Errorf("%s: chat transient = %v, want %v", tc.name, got, tc.chat)
		}
		if got := opEmbed.transient(tc.err); got != tc.embed {
			t.Errorf("%s: embed transient = %v, want %v", tc.name, got, tc.embed)
		}
	}
}

// TestDescribe_Timeout: a chat timeout is the model being slow, an embed
// timeout the server being unavailable.
func TestDescribe_Timeout(t *testing.T) {
	c, err := New(Options{Host: "127.0.0.1:1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	timeout := fmt.Errorf("%w: %w", ErrTimeout, errors.New("deadline"))
	chat := c.describe(opChat, timeout, 0)
	if !errors.Is(chat, ErrTimeout) || errors.Is(chat, ErrUnavailable) {
		t.Errorf("chat timeout: %v", chat)
	}
	embed := c.describe(opEmbed, timeout, 2)
	if !errors.Is(embed, ErrUnavailable) || !errors.Is(embed, ErrTimeout) {
		t.Errorf("embed timeout: %v", embed)
	}
	for _, e := range []error{chat, embed} {
		if want := "ollama at http://127.0.0.1:1: model \"m\": no reply within 2m0s"; len(e.Error()) < len(want) || e.Error()[:len(want)] != want {
			t.Errorf("message %q does not start with %q", e, want)
		}
	}
}
