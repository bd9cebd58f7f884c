package rights

import (
	"context"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/relay/store"
)

// chatKinds are the messages the search index holds (docs/design.md#search).
var chatKinds = []int{1, snowclaw.KindChat, 10, 11, 12, 1111}

// eachChat walks the person's stored messages.
func (s *Service) eachChat(ctx context.Context, pk string, fn func(string, memory.HistoryMessage)) error {
	return store.Each(ctx, s.o.Store, nostr.Filter{Kinds: chatKinds, Authors: []string{pk}}, func(evt *nostr.Event) bool {
		fn(evt.Content, memory.HistoryMessage{
			Pubkey: pk, Content: evt.Content, EventID: evt.ID, Group: snowclaw.ReadEvent(evt).Group,
			Kind: evt.Kind, Timestamp: int64(evt.CreatedAt),
		})
		return true
	})
}
