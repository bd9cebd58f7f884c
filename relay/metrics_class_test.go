package relay

import (
	"testing"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// storedCounts reads snowclaw_events_stored_total by class.
func storedCounts(t *testing.T, m *metrics) map[string]float64 {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "snowclaw_events_stored_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			out[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
		}
	}
	return out
}

// TestCountStoredAs: a class a plugin adds takes the events it matches
// before the relay's own classes, the first added first; the rest keep
// the relay's class, and a class that matched nothing is still exposed.
func TestCountStoredAs(t *testing.T) {
	r := &Relay{met: newMetrics("test")}
	r.CountStoredAs("notes", func(e *snowclaw.Event) bool { return e.Kind == 1 })
	r.CountStoredAs("shadowed", func(e *snowclaw.Event) bool { return e.Kind == 1 || e.Kind == 7 })
	r.CountStoredAs("idle", func(*snowclaw.Event) bool { return false })
	for _, k := range []int{1, 1, 7, 30078, 5, 9999} {
		r.met.wrote(snowclaw.ReadEvent(&nostr.Event{Kind: k}), false, nil)
	}
	got := storedCounts(t, r.met)
	for class, want := range map[string]float64{"notes": 2, "shadowed": 1, "idle": 0, "appdata": 1, "deletion": 1, "other": 1} {
		if v, ok := got[class]; !ok || v != want {
			t.Errorf("class %s: %v (exposed %v), want %v", class, v, ok, want)
		}
	}
}
