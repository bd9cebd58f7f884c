package memory

import (
	"errors"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw"
)

func TestCodec_DecodeLegacyAndForeign(t *testing.T) {
	p := newParties(t)
	selfKey, _ := nip44.GenerateConversationKey(p.agentPK, p.agentSK)
	selfEnc, _ := nip44.Encrypt(`{"notes":["old secret"]}`, selfKey)
	tests := []struct {
		name    string
		evt     nostr.Event
		check   func(Record) bool
		wantErr error // nil: must succeed; errAny: any error
	}{
		{"older plain record, 64-hex d", nostr.Event{Kind: 30078, PubKey: p.agentPK,
			Content: `{"display_names":[["k0",1739800000]],"first_seen":1739800000,"notes":["Project lead"],"preferences":{"language":"en"},"is_owner":true}`,
			Tags:    nostr.Tags{{"d", "snowclaw:memory:npub:" + p.person}, {"h", "inner-circle"}}},
			func(r Record) bool { return r.Npub.Pubkey == p.person && r.Npub.Name() == "k0" && r.Npub.IsOwner }, nil},
		{"32-hex prefix completed from p", nostr.Event{Kind: 30078, PubKey: p.agentPK, Content: `{"notes":["x"]}`,
			Tags: nostr.Tags{{"d", "snowclaw:memory:npub:" + p.person[:32]}, {"p", p.person}}},
			func(r Record) bool { return r.Npub.Pubkey == p.person }, nil},
		{"32-hex prefix without p", nostr.Event{Kind: 30078, PubKey: p.agentPK, Content: `{}`,
			Tags: nostr.Tags{{"d", "snowclaw:memory:npub:" + p.person[:32]}}}, nil, errAny},
		{"p disagreeing with d", nostr.Event{Kind: 30078, PubKey: p.agentPK, Content: `{}`,
			Tags: nostr.Tags{{"d", "snowclaw:memory:npub:" + p.person}, {"p", p.other}}}, nil, errAny},
		{"older self-encrypted record", nostr.Event{Kind: 30078, PubKey: p.agentPK, Content: selfEnc,
			Tags: nostr.Tags{{"d", "snowclaw:memory:npub:" + p.person}, {"encrypted", "nip44"}}},
			func(r Record) bool { return r.Npub.Notes[0] == "old secret" }, nil},
		{"plain-text item is the summary", nostr.Event{Kind: 30078, PubKey: p.other, CreatedAt: 77, Content: "  Use badger by default ",
			Tags: nostr.Tags{{"d", "snow:memory:project/snowclaw/storage"}, {"snow:confidence", "0.6"}}},
			func(r Record) bool {
				it := r.Item
				return it.Text == "Use badger by default" && it.Tier == snowclaw.TierPublic && it.Author == p.other &&
					it.Confidence == 0.6 && it.CreatedAt == 77 && it.ID == ItemID(snowclaw.TierPublic, "", it.Text) &&
					it.Topic == "project/snowclaw/storage" && it.Source == SourceAgent
			}, nil},
		{"foreign JSON item in a group", nostr.Event{Kind: 30078, PubKey: p.other, CreatedAt: 5,
			Content: `{"summary":"NIP-42 needs a challenge","detail":"send AUTH first"}`,
			Tags:    nostr.Tags{{"d", "snow:memory:group/g/nip42"}, {"h", "g"}, {"snow:confidence", "7"}}},
			func(r Record) bool {
				return r.Item.Group == "g" && r.Item.Tier == snowclaw.TierGroup && r.Item.Detail == "send AUTH first" &&
					r.Item.Confidence == 0.7
			}, nil},
		{"a detail without a summary is the summary, not the JSON", nostr.Event{Kind: 30078, PubKey: p.other,
			Content: `{"detail":"send AUTH first"}`, Tags: nostr.Tags{{"d", "snow:memory:group/g/nip42"}, {"h", "g"}}},
			func(r Record) bool { return r.Item.Text == "send AUTH first" && r.Item.Detail == "" }, nil},
		{"public lesson of another agent stays an item", nostr.Event{Kind: 30078, PubKey: p.other, Content: `{"summary":"check sigs"}`,
			Tags: nostr.Tags{{"d", "snow:memory:lesson/sigs"}}},
			func(r Record) bool { return r.Item != nil && r.Lesson == nil }, nil},
		{"item without text", nostr.Event{Kind: 30078, Content: `{"summary":""}`, Tags: nostr.Tags{{"d", "snow:memory:x"}}}, nil, errAny},
		{"config is not memory", nostr.Event{Kind: 30078, Content: `{}`, Tags: nostr.Tags{{"d", "snowclaw:config:global"}}}, nil, ErrNotMemory},
		{"chat is not memory", nostr.Event{Kind: 9, Content: "hi"}, nil, ErrNotMemory},
		{"garbage ciphertext", nostr.Event{Kind: 30078, PubKey: p.agentPK, Content: "AAAA",
			Tags: nostr.Tags{{"d", "snow:memory:agent/notes/x"}, {"encrypted", "nip44"}}}, nil, ErrDecrypt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := p.codec.Decode(snowclaw.ReadEvent(&tc.evt))
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Decode: %v", err)
			case tc.wantErr == errAny && err == nil, tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("Decode = %v, want %v", err, tc.wantErr)
			case tc.wantErr == nil && !tc.check(rec):
				t.Errorf("decoded %s", dump(rec))
			}
		})
	}
}

var errAny = errors.New("any error")

func TestCodec_CreatedAtAlwaysAdvances(t *testing.T) {
	p := newParties(t)
	clk := newClock(1000)
	p.codec.Now = clk.Now
	rec := Record{Group: &Group{ID: "g"}}
	a, _ := p.codec.Encode(rec)
	b, _ := p.codec.Encode(rec)
	other, _ := p.codec.Encode(Record{Group: &Group{ID: "h"}})
	if a.CreatedAt != 1000 || b.CreatedAt != 1001 || other.CreatedAt != 1000 {
		t.Errorf("created_at %d, %d, other d %d", a.CreatedAt, b.CreatedAt, other.CreatedAt)
	}
	// A stored version from a skewed clock: the next one must still win.
	stored := p.signed(t, Record{Group: &Group{ID: "g"}, CreatedAt: 5000})
	if _, err := p.codec.Decode(snowclaw.ReadEvent(stored)); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	if c, _ := p.codec.Encode(rec); c.CreatedAt <= stored.CreatedAt {
		t.Errorf("created_at %d not after stored %d", c.CreatedAt, stored.CreatedAt)
	}
}
