package memory

import (
	"errors"
	"testing"

	"github.com/snowclaw/snowclaw"
)

// The owner's ruling holds a topic: the item there leaves RAM, and nothing
// is stored at that address again, whichever way it comes.
func TestStore_RuledTopic(t *testing.T) {
	s, _ := newTestStore(t, Options{})
	may10, _ := s.Remember(Item{Text: "the launch is on May 10", Group: "g"})
	other, _ := s.Remember(Item{Text: "the crew meets on Fridays", Group: "g"})
	gone := s.Rule(may10.Topic)
	if len(gone) != 1 || gone[0].ID != may10.ID {
		t.Fatalf("Rule dropped %+v, want the item at %s", gone, may10.Topic)
	}
	if _, ok := s.Item(may10.ID); ok || s.Dirty() != 1 {
		t.Fatalf("the ruled-out item is still held (or still dirty: %d dirty)", s.Dirty())
	}
	if _, ok := s.Item(other.ID); !ok {
		t.Fatal("an item at another topic was dropped")
	}
	for _, tc := range []struct {
		name  string
		store func() error
	}{
		{"a new version landing there", func() error {
			if _, err := s.Replace(other.ID, Item{Text: "the launch is on May 10", Tier: snowclaw.TierGroup, Topic: "group/g/facts"}); err == nil {
				return errors.New("replaced")
			}
			return nil
		}},
		{"the same memory again", func() error {
			if _, fresh := s.Remember(Item{Text: "The launch is ON may 10!", Group: "g"}); fresh {
				return errors.New("stored")
			}
			return nil
		}},
		{"at the topic exactly", func() error {
			_, err := s.RememberAt(Item{Text: "the launch is on May 11", Group: "g", Topic: may10.Topic})
			if !errors.Is(err, ErrTopicTaken) {
				return errors.New("not refused as taken")
			}
			return nil
		}},
	} {
		if err := tc.store(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, it := range s.Items() {
		if it.Topic == may10.Topic {
			t.Fatalf("an item stands at the ruled topic: %+v", it)
		}
	}
	if _, fresh := s.Remember(Item{Text: "the launch is on May 12", Group: "g"}); !fresh {
		t.Fatal("a memory at a topic of its own was refused")
	}
}
