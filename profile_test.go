package snowclaw_test

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

func TestProfileShown(t *testing.T) {
	for content, want := range map[string]string{
		`{"name":"bob","display_name":" Bob B "}`: "Bob B",
		`{"name":" bob "}`:                        "bob",
		`{"display_name":"  ","name":"bob"}`:      "bob",
		`{}`:                                      "",
	} {
		p, err := snowclaw.ProfileOf(&nostr.Event{Kind: snowclaw.KindProfile, Content: content})
		if err != nil || p.Shown() != want {
			t.Errorf("ProfileOf(%s).Shown() = %q, %v; want %q", content, p.Shown(), err, want)
		}
	}
	if _, err := snowclaw.ProfileOf(&nostr.Event{Content: "not json"}); err == nil {
		t.Error("ProfileOf read a profile that is not JSON")
	}
}
