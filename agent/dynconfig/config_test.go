package dynconfig

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nbd-wtf/go-nostr"
)

const owner = pkHex

// ownerEvent is a config event from the owner at time at.
func ownerEvent(d, content string, at nostr.Timestamp) *nostr.Event {
	evt := configEvent(d, content)
	evt.PubKey, evt.CreatedAt = owner, at
	evt.ID = fmt.Sprintf("%064x", int64(at))
	return evt
}

func TestConfig_Resolve(t *testing.T) {
	const (
		global = "snowclaw:config:global"
		team   = "snowclaw:config:group:techteam"
		npubD  = "snowclaw:config:npub:" + pkNpub
		hexD   = "snowclaw:config:npub:" + pk2Hex
	)
	prefixD := "snowclaw:config:npub:" + pk2Hex[:32]
	tests := []struct {
		name          string
		file          Patch
		events        []*nostr.Event
		pubkey, group string
		want          Settings
	}{
		{"defaults", Patch{}, nil, pkHex, "techteam", Settings{Mention, 20}},
		{"file over defaults", Patch{RespondMode: All, ContextHistory: 7}, nil, pkHex, "techteam", Settings{All, 7}},
		{"invalid file values ignored", Patch{RespondMode: "loud", ContextHistory: -3}, nil, pkHex, "techteam", Settings{Mention, 20}},
		{"global over file", Patch{RespondMode: All, ContextHistory: 7},
			[]*nostr.Event{ownerEvent(global, `{"respond_mode":"owner","context_history":9}`, 1)},
			pkHex, "techteam", Settings{Owner, 9}},
		{"group over global", Patch{},
			[]*nostr.Event{ownerEvent(global, `{"respond_mode":"owner"}`, 1), ownerEvent(team, `{"respond_mode":"all"}`, 1)},
			pkHex, "techteam", Settings{All, 20}},
		{"other group falls to global", Patch{},
			[]*nostr.Event{ownerEvent(global, `{"respond_mode":"owner"}`, 1), ownerEvent(team, `{"respond_mode":"all"}`, 1)},
			pkHex, "random", Settings{Owner, 20}},
		{"npub over group", Patch{},
			[]*nostr.Event{ownerEvent(team, `{"respond_mode":"all"}`, 1), ownerEvent(npubD, `{"respond_mode":"none"}`, 1)},
			pkHex, "techteam", Settings{None, 20}},
		{"npub given as npub", Patch{},
			[]*nostr.Event{ownerEvent(npubD, `{"respond_mode":"none"}`, 1)},
			pkNpub, "techteam", Settings{None, 20}},
		{"other sender unaffected by npub scope", Patch{},
			[]*nostr.Event{ownerEvent(npubD, `{"respond_mode":"none"}`, 1)},
			pk2Hex, "techteam", Settings{Mention, 20}},
		{"per-field mixing", Patch{ContextHistory: 11},
			[]*nostr.Event{
				ownerEvent(global, `{"respond_mode":"owner"}`, 1),
				ownerEvent(team, `{"context_history":40}`, 1),
				ownerEvent(npubD, `{"respond_mode":"all"}`, 1),
			},
			pkHex, "techteam", Settings{All, 40}},
		{"per-field mixing down to file and default", Patch{ContextHistory: 11},
			[]*nostr.Event{ownerEvent(npubD, `{"respond_mode":"all"}`, 1)},
			pkHex, "techteam", Settings{All, 11}},
		{"private conversation skips groups", Patch{},
			[]*nostr.Event{ownerEvent(team, `{"respond_mode":"all"}`, 1), ownerEvent(global, `{"context_history":3}`, 1)},
			pkHex, "", Settings{Mention, 3}},
		{"private conversation uses npub", Patch{},
			[]*nostr.Event{ownerEvent(npubD, `{"respond_mode":"all"}`, 1)},
			pkHex, "", Settings{All, 20}},
		{"legacy hex d tag", Patch{},
			[]*nostr.Event{ownerEvent(hexD, `{"respond_mode":"none"}`, 1)},
			pk2Hex, "techteam", Settings{None, 20}},
		{"legacy prefix d tag", Patch{},
			[]*nostr.Event{ownerEvent(prefixD, `{"respond_mode":"none","context_history":2}`, 1)},
			pk2Hex, "techteam", Settings{None, 2}},
		{"full key before prefix", Patch{},
			[]*nostr.Event{ownerEvent(prefixD, `{"respond_mode":"none","context_history":2}`, 1), ownerEvent(hexD, `{"respond_mode":"all"}`, 1)},
			pk2Hex, "techteam", Settings{All, 2}},
		{"prefix does not match another key", Patch{},
			[]*nostr.Event{ownerEvent(prefixD, `{"respond_mode":"none"}`, 1)},
			pkHex, "techteam", Settings{Mention, 20}},
		{"empty patch clears scope", Patch{},
			[]*nostr.Event{ownerEvent(team, `{"respond_mode":"all"}`, 1), ownerEvent(team, ``, 2)},
			pkHex, "techteam", Settings{Mention, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.file)
			for _, evt := range tt.events {
				if _, err := c.Apply(evt, owner); err != nil {
					t.Fatalf("Apply(%s): %v", evt.Tags.GetD(), err)
				}
			}
			if got := c.Resolve(tt.pubkey, tt.group); got != tt.want {
				t.Errorf("Resolve = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestConfig_Apply(t *testing.T) {
	const team = "snowclaw:config:group:techteam"
	fromStranger := ownerEvent(team, `{"respond_mode":"none"}`, 5)
	fromStranger.PubKey = pk2Hex
	upperOwner := ownerEvent(team, `{"respond_mode":"owner"}`, 3)
	upperOwner.PubKey = "299ED02E8537779781C1EC09E13BBA57BFF851297D525CF27DFD4B23A8CED10B"
	sameTimeLowerID := ownerEvent(team, `{"respond_mode":"owner"}`, 2)
	sameTimeLowerID.ID = strings.Repeat("0", 64)
	sameTimeHigherID := ownerEvent(team, `{"respond_mode":"owner"}`, 2)
	sameTimeHigherID.ID = "ff" + sameTimeHigherID.ID[2:]

	tests := []struct {
		name    string
		owner   string
		evt     *nostr.Event
		wantErr error // nil: applied
		want    RespondMode
	}{
		{"owner newer applies", owner, ownerEvent(team, `{"respond_mode":"none"}`, 3), nil, None},
		{"owner key in upper case", owner, upperOwner, nil, Owner},
		{"non-owner ignored", owner, fromStranger, ErrNotOwner, All},
		{"no owner configured", "", ownerEvent(team, `{"respond_mode":"none"}`, 3), ErrNotOwner, All},
		{"older ignored", owner, ownerEvent(team, `{"respond_mode":"none"}`, 1), ErrStale, All},
		{"same time lower id wins", owner, sameTimeLowerID, nil, Owner},
		{"same time higher id ignored", owner, sameTimeHigherID, ErrStale, All},
		{"same event again is no error", owner, ownerEvent(team, `{"respond_mode":"all"}`, 2), nil, All},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Patch{})
			if _, err := c.Apply(ownerEvent(team, `{"respond_mode":"all"}`, 2), owner); err != nil {
				t.Fatal(err)
			}
			_, err := c.Apply(tt.evt, tt.owner)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Apply error = %v, want %v", err, tt.wantErr)
			}
			if got := c.Resolve(pkHex, "techteam").RespondMode; got != tt.want {
				t.Errorf("respond mode after Apply = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConfig_ApplyBadEventChangesNothing(t *testing.T) {
	c := New(Patch{})
	if _, err := c.Apply(ownerEvent("snowclaw:config:global", `{"context_history":8}`, 1), owner); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{`{"context_history":0}`, `not json`, `{"respond_mode":"loud"}`} {
		if _, err := c.Apply(ownerEvent("snowclaw:config:global", content, 2), owner); err == nil {
			t.Errorf("Apply(%s) accepted", content)
		}
	}
	if got := c.Resolve(pkHex, "").ContextHistory; got != 8 {
		t.Errorf("context_history = %d after rejected events, want 8", got)
	}
}

func TestConfig_GetRemoveScopes(t *testing.T) {
	c := New(Patch{RespondMode: All})
	team := Scope{Kind: Group, ID: "techteam"}
	person := Scope{Kind: Npub, ID: pkHex}
	for _, evt := range []*nostr.Event{
		ownerEvent(team.DTag(), `{"context_history":30}`, 1),
		// Legacy hex form of the same person's scope: the same Scope.
		ownerEvent("snowclaw:config:npub:"+pkHex, `{"respond_mode":"none"}`, 1),
		ownerEvent("snowclaw:config:global", ``, 1),
	} {
		if _, err := c.Apply(evt, owner); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		scope Scope
		want  Patch
		ok    bool
	}{
		{"group", team, Patch{ContextHistory: 30}, true},
		{"npub", person, Patch{RespondMode: None}, true},
		{"cleared global", Scope{Kind: Global}, Patch{}, false},
		{"unknown", Scope{Kind: Group, ID: "other"}, Patch{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := c.Get(tt.scope); got != tt.want || ok != tt.ok {
				t.Errorf("Get(%v) = %+v, %v; want %+v, %v", tt.scope, got, ok, tt.want, tt.ok)
			}
		})
	}
	scopes := c.Scopes()
	if len(scopes) != 2 || scopes["group:techteam"] != (Patch{ContextHistory: 30}) || scopes["npub:"+pkNpub] != (Patch{RespondMode: None}) {
		t.Errorf("Scopes() = %+v", scopes)
	}
	c.Remove(team)
	if _, ok := c.Get(team); ok {
		t.Errorf("scope still set after Remove")
	}
	if got := c.Resolve(pk2Hex, "techteam"); got != (Settings{All, 20}) {
		t.Errorf("Resolve after Remove = %+v", got)
	}
}

func TestConfig_Concurrent(t *testing.T) {
	c := New(Patch{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _ = c.Apply(ownerEvent("snowclaw:config:global", fmt.Sprintf(`{"context_history":%d}`, i+1), nostr.Timestamp(i+1)), owner)
		}()
		go func() {
			defer wg.Done()
			_ = c.Resolve(pkHex, "techteam")
			_ = c.Scopes()
		}()
	}
	wg.Wait()
	if got := c.Resolve(pkHex, "").ContextHistory; got != 8 {
		t.Errorf("context_history = %d, want the newest event's 8", got)
	}
}
