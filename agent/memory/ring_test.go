package memory

import (
	"strconv"
	"testing"
)

func pushN(r *Ring, from, to int) {
	for i := from; i <= to; i++ {
		r.Push(HistoryMessage{EventID: strconv.Itoa(i)})
	}
}

func ids(ms []HistoryMessage) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ","
		}
		s += m.EventID
	}
	return s
}

func TestRing_Push(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		pushes   int
		want     string
	}{
		{"under capacity", 5, 3, "1,2,3"},
		{"exactly full", 3, 3, "1,2,3"},
		{"wraps dropping oldest", 3, 7, "5,6,7"},
		{"zero keeps nothing", 0, 4, ""},
		{"negative is zero", -2, 4, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRing(tc.capacity)
			pushN(r, 1, tc.pushes)
			if got := ids(r.Messages()); got != tc.want {
				t.Errorf("Messages = %q, want %q", got, tc.want)
			}
			if r.Len() > r.Cap() {
				t.Errorf("Len %d > Cap %d", r.Len(), r.Cap())
			}
		})
	}
}

func TestRing_Resize(t *testing.T) {
	tests := []struct {
		name       string
		capacity   int
		pushes     int
		resize     int
		thenPushes int
		want       string
	}{
		{"shrink drops oldest at once", 5, 5, 2, 0, "4,5"},
		{"shrink after wrap", 3, 7, 2, 0, "6,7"},
		{"grow keeps all and order", 3, 5, 6, 2, "3,4,5,6,7"},
		{"grow then fill", 2, 2, 4, 3, "2,3,4,5"},
		{"to zero empties", 4, 4, 0, 2, ""},
		{"from zero starts filling", 0, 3, 2, 3, "5,6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRing(tc.capacity)
			pushN(r, 1, tc.pushes)
			r.Resize(tc.resize)
			if r.Cap() != max(tc.resize, 0) {
				t.Fatalf("Cap = %d, want %d", r.Cap(), tc.resize)
			}
			if r.Len() > r.Cap() {
				t.Fatalf("after resize Len %d > Cap %d", r.Len(), r.Cap())
			}
			pushN(r, tc.pushes+1, tc.pushes+tc.thenPushes)
			if got := ids(r.Messages()); got != tc.want {
				t.Errorf("Messages = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRing_MessagesIsCopy(t *testing.T) {
	r := NewRing(2)
	r.Push(HistoryMessage{Content: "a"})
	ms := r.Messages()
	ms[0].Content = "changed"
	if got := r.Messages()[0].Content; got != "a" {
		t.Errorf("ring content changed through the copy: %q", got)
	}
}
