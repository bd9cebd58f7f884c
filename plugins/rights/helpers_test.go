package rights

import (
	"strings"

	"github.com/nbd-wtf/go-nostr"
)

func heldText(id, text string) held {
	return held{evt: &nostr.Event{ID: id, Kind: 30078}, text: text}
}

func startsWith(s, p string) bool { return strings.HasPrefix(s, p) }
