package memory

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestStore_Lessons(t *testing.T) {
	s, clk := newTestStore(t, Options{})
	a, isNew := s.Learn(Lesson{Text: "Answer in the user's language", Source: "owner"})
	if !isNew || !a.Enabled || a.ID == "" {
		t.Fatalf("Learn = %+v new=%v", a, isNew)
	}
	clk.Add(time.Minute)
	b, _ := s.Learn(Lesson{Text: "Never guess pubkeys", Source: "owner"})
	clk.Add(time.Minute)
	c, _ := s.Learn(Lesson{Text: "Keep answers short", Source: "owner"})
	again, isNew := s.Learn(Lesson{Text: "answer in the user’s language!", Source: "owner"})
	if isNew || again.ID != a.ID || again.Hits != 1 {
		t.Errorf("relearn = %+v new=%v", again, isNew)
	}
	if err := s.SetLessonEnabled(b.ID, false); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Learn(Lesson{Text: b.Text, Source: "owner"}); l.Enabled {
		t.Errorf("relearning re-enabled a disabled lesson")
	}
	tests := []struct {
		name string
		n    int
		want []string
	}{
		{"most hits first then newest", 5, []string{a.Text, c.Text}},
		{"n caps", 1, []string{a.Text}},
		{"zero", 0, nil},
	}
	for _, tc := range tests {
		got := s.TopLessons(tc.n, func(Lesson) bool { return true })
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: TopLessons = %q, want %q", tc.name, got, tc.want)
		}
	}
	if err := s.SetLessonEnabled("nope", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetLessonEnabled(unknown) = %v", err)
	}
	if _, err := s.DeleteLesson("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteLesson(unknown) = %v", err)
	}
	del, err := s.DeleteLesson(c.ID)
	if err != nil || del.ID != c.ID || len(s.Lessons()) != 2 {
		t.Errorf("DeleteLesson = %+v, %v", del, err)
	}
	if rm := s.Removed(); len(rm) != 1 || rm[0].D != "snow:memory:lesson/"+c.ID {
		t.Errorf("Removed = %+v", rm)
	}
}

func TestStore_LessonCap(t *testing.T) {
	s, clk := newTestStore(t, Options{MaxLessons: 3})
	first, _ := s.Learn(Lesson{Text: "lesson zero", Source: "owner"})
	s.Learn(Lesson{Text: "lesson zero", Source: "owner"}) // one hit: worth keeping
	off, _ := s.Learn(Lesson{Text: "lesson off", Source: "owner"})
	s.SetLessonEnabled(off.ID, false)
	for i := 1; i <= 3; i++ {
		clk.Add(time.Second)
		s.Learn(Lesson{Text: fmt.Sprintf("lesson %d", i), Source: "owner"})
	}
	ls := s.Lessons()
	if len(ls) != 3 {
		t.Fatalf("lessons = %d, want 3", len(ls))
	}
	if _, ok := s.Lesson(first.ID); !ok {
		t.Errorf("the lesson with hits was dropped")
	}
	if _, ok := s.Lesson(off.ID); ok {
		t.Errorf("the disabled lesson was kept")
	}
	if rm := s.Removed(); len(rm) != 2 {
		t.Errorf("Removed = %+v", rm)
	}
}
