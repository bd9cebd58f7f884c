package memory

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
	"github.com/nbd-wtf/go-nostr/nip44"
	"github.com/snowclaw/snowclaw"
)

type parties struct {
	codec             *Codec
	agentSK, agentPK  string
	personSK, person  string
	strangerSK, other string
}

func newParties(t *testing.T) parties {
	t.Helper()
	var p parties
	p.agentSK, p.agentPK = keypair(t)
	p.personSK, p.person = keypair(t)
	p.strangerSK, p.other = keypair(t)
	c, err := NewCodec(p.agentSK)
	if err != nil {
		t.Fatal(err)
	}
	c.Model = "local/test"
	c.Now = newClock(1_700_000_000).Now
	p.codec = c
	return p
}

// signed encodes and signs a record the way the agent publishes it.
func (p parties) signed(t *testing.T, r Record) *nostr.Event {
	t.Helper()
	evt, err := p.codec.Encode(r)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if err := evt.Sign(p.agentSK); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if ok, err := evt.CheckSignature(); !ok || err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	return &evt
}

func tag(evt *nostr.Event, key string) string {
	if v := snowclaw.TagValues(evt, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func TestCodec_RoundTrip(t *testing.T) {
	p := newParties(t)
	npub, _ := nip19.EncodePublicKey(p.person)
	agentNpub, _ := nip19.EncodePublicKey(p.agentPK)
	person := &Npub{Pubkey: p.person, DisplayNames: []DisplayName{{"k0", 1}}, FirstSeen: 1, FirstSeenGroup: "g",
		LastInteraction: 9, Notes: []string{"secret-note-42"}, OwnerNotes: []string{"lead"},
		Preferences: map[string]string{"language": "en"}}
	group := &Group{ID: "techteam", Name: "Tech", Purpose: "coordination", Members: []Member{{npub, "k0"}},
		Themes: []string{"nostr"}, Decisions: []Decision{{"Use NIP-78", 5}}, LastActivity: 7}
	item := func(tier snowclaw.Tier, group, subject string) *Item {
		it := Item{Text: "secret-fact-42 likes tea", Detail: "green", Context: "said in chat", Source: SourceExplicit,
			Tier: tier, Group: group, Subject: subject, Author: p.person, Confidence: 0.85, CreatedAt: 3, UpdatedAt: 4, Hits: 2}
		it.ID = ItemID(tier, it.Scope(), it.Text)
		it.Topic = DefaultTopic(it)
		return &it
	}
	lesson := &Lesson{ID: "abc123abc123", Text: "secret-lesson-42", Source: "owner", Enabled: false, Hits: 3, CreatedAt: 1, UpdatedAt: 2}

	tests := []struct {
		name      string
		rec       Record
		d         string
		tier      snowclaw.Tier
		ns        snowclaw.Namespace
		tags      map[string]string // tag key → first value ("" = must be absent)
		encrypted bool
	}{
		{"npub", Record{Npub: person}, "snowclaw:memory:npub:" + npub, snowclaw.TierPrivate, snowclaw.NamespaceMemoryNpub,
			map[string]string{"p": p.person, "encrypted": "nip44", "h": ""}, true},
		{"group", Record{Group: group}, "snowclaw:memory:group:techteam", snowclaw.TierGroup, snowclaw.NamespaceMemoryGroup,
			map[string]string{"h": "techteam", "encrypted": "", "p": ""}, false},
		{"public item", Record{Item: item(snowclaw.TierPublic, "", "")}, "", snowclaw.TierPublic, snowclaw.NamespaceMemoryItem,
			map[string]string{"t": "fact", "snow:tier": "public", "snow:confidence": "0.85", "snow:source": agentNpub, "snow:model": "local/test", "h": "", "p": "", "encrypted": ""}, false},
		{"group item", Record{Item: item(snowclaw.TierGroup, "techteam", "")}, "", snowclaw.TierGroup, snowclaw.NamespaceMemoryItem,
			map[string]string{"t": "group", "snow:tier": "group", "h": "techteam", "p": "", "encrypted": ""}, false},
		{"private item", Record{Item: item(snowclaw.TierPrivate, "", p.person)}, "", snowclaw.TierPrivate, snowclaw.NamespaceMemoryItem,
			map[string]string{"t": "user", "snow:tier": "private", "p": p.person, "encrypted": "nip44", "h": ""}, true},
		{"internal item", Record{Item: item(snowclaw.TierInternal, "", "")}, "", snowclaw.TierInternal, snowclaw.NamespaceMemoryItem,
			map[string]string{"t": "agent", "snow:tier": "internal", "encrypted": "nip44", "p": "", "h": ""}, true},
		{"lesson", Record{Lesson: lesson}, "snow:memory:lesson/abc123abc123", snowclaw.TierInternal, snowclaw.NamespaceMemoryItem,
			map[string]string{"t": "lesson", "snow:tier": "internal", "encrypted": "nip44", "p": ""}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evt := p.signed(t, tc.rec)
			if evt.Kind != snowclaw.KindAppData || evt.PubKey != p.agentPK || evt.CreatedAt == 0 {
				t.Errorf("kind %d pubkey %s created %d", evt.Kind, evt.PubKey, evt.CreatedAt)
			}
			d := tc.d
			if d == "" {
				d = "snow:memory:" + tc.rec.Item.Topic
			}
			if evt.Tags.GetD() != d {
				t.Errorf("d = %q, want %q", evt.Tags.GetD(), d)
			}
			if ns := snowclaw.ReadEvent(evt).Namespace; ns != tc.ns {
				t.Errorf("namespace %v, want %v", ns, tc.ns)
			}
			if got := snowclaw.ReadEvent(evt).Tier; got != tc.tier {
				t.Errorf("tier = %s, want %s", got, tc.tier)
			}
			for k, v := range tc.tags {
				if got := tag(evt, k); got != v || v == "" && snowclaw.HasTag(evt, k) {
					t.Errorf("tag %s = %q, want %q", k, got, v)
				}
			}
			if tc.encrypted && (strings.Contains(evt.Content, "secret-") || strings.HasPrefix(evt.Content, "{")) {
				t.Errorf("ciphertext carries plaintext: %.80s", evt.Content)
			}
			if !tc.encrypted && !json.Valid([]byte(evt.Content)) {
				t.Errorf("plain content is not JSON: %s", evt.Content)
			}

			got, err := p.codec.Decode(snowclaw.ReadEvent(evt))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got.CreatedAt != int64(evt.CreatedAt) {
				t.Errorf("CreatedAt = %d, want %d", got.CreatedAt, evt.CreatedAt)
			}
			got.CreatedAt = 0
			if !reflect.DeepEqual(got, tc.rec) {
				t.Errorf("round trip:\n got %s\nwant %s", dump(got), dump(tc.rec))
			}
		})
	}
}

func dump(r Record) string {
	b, _ := json.Marshal(struct {
		N *Npub
		G *Group
		I *Item
		L *Lesson
	}{r.Npub, r.Group, r.Item, r.Lesson})
	return string(b) + func() string {
		if r.Npub != nil {
			return " pubkey=" + r.Npub.Pubkey
		}
		if r.Group != nil {
			return " id=" + r.Group.ID
		}
		return ""
	}()
}

func TestCodec_PersonReadsOwnRecords(t *testing.T) {
	p := newParties(t)
	npubRec := p.signed(t, Record{Npub: &Npub{Pubkey: p.person, Notes: []string{"likes tea"}}})
	privItem := p.signed(t, Record{Item: &Item{ID: "aaaaaaaaaaaa", Topic: "user/x/notes/aaaaaaaaaaaa", Text: "likes tea",
		Tier: snowclaw.TierPrivate, Subject: p.person}})
	internal := p.signed(t, Record{Item: &Item{ID: "bbbbbbbbbbbb", Topic: "agent/notes/bbbbbbbbbbbb", Text: "agent only",
		Tier: snowclaw.TierInternal}})

	// Plain nip44 with the person's secret and the agent's pubkey.
	key, err := nip44.GenerateConversationKey(p.agentPK, p.personSK)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		evt    *nostr.Event
		want   string // substring of the plaintext; "" = must not decrypt
		reader string
	}{
		{"person reads their record", npubRec, "likes tea", p.personSK},
		{"person reads their private item", privItem, "likes tea", p.personSK},
		{"person cannot read internal", internal, "", p.personSK},
		{"stranger cannot read the record", npubRec, "", p.strangerSK},
		{"stranger cannot read the private item", privItem, "", p.strangerSK},
		{"stranger cannot read internal", internal, "", p.strangerSK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := key
			if tc.reader != p.personSK {
				k, _ = nip44.GenerateConversationKey(p.agentPK, tc.reader)
			}
			plain, err := nip44.Decrypt(tc.evt.Content, k)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("decrypted: %s", plain)
				}
			} else if err != nil || !strings.Contains(plain, tc.want) {
				t.Fatalf("Decrypt = %q, %v", plain, err)
			}

			// The same through a Codec holding the reader's key.
			c, _ := NewCodec(tc.reader)
			c.TrustAgent = p.agentPK
			rec, err := c.Decode(snowclaw.ReadEvent(tc.evt))
			if tc.want == "" {
				if !errors.Is(err, ErrDecrypt) {
					t.Errorf("Decode = %+v, %v; want ErrDecrypt", rec, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode with the person's key: %v", err)
			}
		})
	}
}

func TestCodec_EncodeErrors(t *testing.T) {
	p := newParties(t)
	tests := []struct {
		name string
		rec  Record
	}{
		{"nothing set", Record{}},
		{"two kinds", Record{Group: &Group{ID: "g"}, Lesson: &Lesson{ID: "l", Text: "x"}}},
		{"npub without key", Record{Npub: &Npub{Pubkey: "bob"}}},
		{"group without id", Record{Group: &Group{}}},
		{"item not remembered", Record{Item: &Item{Text: "x", Tier: snowclaw.TierPublic}}},
		{"private item without subject", Record{Item: &Item{ID: "a", Topic: "t/a", Text: "x", Tier: snowclaw.TierPrivate}}},
		{"too large", Record{Group: &Group{ID: "g", Purpose: strings.Repeat("x", MaxContentBytes)}}},
	}
	for _, tc := range tests {
		if evt, err := p.codec.Encode(tc.rec); err == nil {
			t.Errorf("%s: Encode succeeded: %v", tc.name, evt)
		}
	}
}

// TestCodec_SearchIndexShape checks the content the way plugins/memsearch
// reads it: summary, detail and context at the top level of the JSON.
func TestCodec_SearchIndexShape(t *testing.T) {
	p := newParties(t)
	s, _ := newTestStore(t, Options{})
	it, _ := s.Remember(Item{Text: "Deploys on Friday", Detail: "after standup", Context: "techteam chat", Group: "g"})
	evt := p.signed(t, Record{Item: &it})
	var m struct{ Summary, Detail, Context string }
	if err := json.Unmarshal([]byte(evt.Content), &m); err != nil {
		t.Fatal(err)
	}
	if m.Summary != "Deploys on Friday" || m.Detail != "after standup" || m.Context != "techteam chat" {
		t.Errorf("index would read %+v from %s", m, evt.Content)
	}
	if strings.Contains(evt.Content, `"summary":"`+it.ID) {
		t.Errorf("bookkeeping leaked into the summary")
	}
}
