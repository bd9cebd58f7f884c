package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/groupread"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// groupOpener returns what search prints of an event: a group-sealed
// memory opened with the keys the agent sent to the searching key
// (groupread, docs/group-encryption.md), read over the connection c
// already authenticated as sk; anything else as it came. A sealed memory
// this key holds no key for says so instead of printing ciphertext.
func groupOpener(ctx context.Context, c *wsclient.Client, relayURL, sk string) func(*nostr.Event) *nostr.Event {
	var keys *groupread.Keyring
	if sk != "" {
		if base, err := (&ownerClient{relay: relayURL}).httpURL(""); err == nil {
			keys, _ = groupread.NewKeyring(sk, groupread.AgentOf(&http.Client{Timeout: 30 * time.Second}, base), groupread.Over(c, 30*time.Second))
		}
	}
	return func(evt *nostr.Event) *nostr.Event {
		if !snowclaw.IsGroupEncrypted(evt) {
			return evt
		}
		shown := *evt
		shown.Content = "(encrypted group memory: this key holds no key that opens it)"
		if g, v, err := snowclaw.GroupSealOf(evt); err == nil {
			shown.Content = fmt.Sprintf("(encrypted: no key of group %s version %d was delivered to this key)", g, v)
		}
		if keys != nil {
			if plain, err := keys.Open(ctx, evt); err == nil {
				shown.Content = plain
			}
		}
		return &shown
	}
}
