package agent

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// TestSeeGroupMessage_NoHistoryCopy: a group message the agent neither
// answers nor learns from at once (no model, respond mode mention, not
// addressed) is buffered without copying the group's buffer, which it
// did for every message (the copy was a third of the agent's CPU on
// group chat ingest).
func TestSeeGroupMessage_NoHistoryCopy(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's own allocations swamp the count")
	}
	a := testAgent(t, Options{})
	pk, _ := nostr.GetPublicKey(nostr.GeneratePrivateKey())
	msg := func(i int) *nostr.Event {
		evt := &nostr.Event{Kind: 9, PubKey: pk, CreatedAt: nostr.Timestamp(1_700_000_000 + i), Tags: nostr.Tags{{"h", "team"}},
			Content: fmt.Sprintf("message %d about the release plan", i)}
		evt.ID = evt.GetID()
		return evt
	}
	for i := range 300 {
		a.seeGroupMessage(snowclaw.ReadEvent(msg(i)))
	}
	held := a.ring("team").Len()
	if held < 10 {
		t.Fatalf("the group buffer holds %d messages; the test needs a full one", held)
	}
	evs := make([]*nostr.Event, 200)
	for i := range evs {
		evs[i] = msg(300 + i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, evt := range evs {
		a.seeGroupMessage(snowclaw.ReadEvent(evt))
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / uint64(len(evs))
	if ring := uint64(held) * uint64(unsafe.Sizeof(memory.HistoryMessage{})); per >= ring {
		t.Fatalf("%d bytes allocated per message, at least a copy of the %d-message buffer (%d bytes)", per, held, ring)
	}
	if got := a.ring("team").Messages(); got[len(got)-1].EventID != evs[len(evs)-1].ID {
		t.Fatal("the last message is not buffered")
	}
}
