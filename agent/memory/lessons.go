package memory

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/snowclaw/snowclaw"
)

// Learn stores a lesson and reports whether it is new. Its id derives from
// the normalized text and its scope (LessonID), so learning the same lesson
// again in the same place bumps its Hits instead of adding a copy, and
// leaves its wording and Enabled alone: a lesson the owner switched off
// stays off. A new lesson starts enabled. A lesson without the scope its
// tier needs is refused (the zero Lesson). Beyond MaxLessons the least
// useful lessons (disabled first, then fewest hits, then oldest) are
// dropped and reported through Removed.
func (s *Store) Learn(l Lesson) (Lesson, bool) {
	l.Text = truncate(strings.TrimSpace(l.Text), maxTextBytes)
	if Normalize(l.Text) == "" {
		return Lesson{}, false
	}
	if pk, err := snowclaw.ParsePubkey(l.Subject); err == nil {
		l.Subject = pk
	}
	if l.Tier == snowclaw.TierInternal {
		l.Tier = ""
	}
	l.Source = cmp.Or(l.Source, "correction")
	if l.Valid() != nil || l.Unscoped() {
		return Lesson{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if l.ID == "" {
		l.ID = LessonID(l)
	}
	if old, ok := s.lessons[l.ID]; ok {
		old.Hits++
		old.UpdatedAt = max(old.UpdatedAt, now)
		s.markDirtyLocked(keyOf(KindLesson, old.ID, ""))
		return *old, false
	}
	l.Enabled = true
	l.Source = cmp.Or(l.Source, "correction")
	l.CreatedAt = cmp.Or(l.CreatedAt, now)
	l.UpdatedAt = max(cmp.Or(l.UpdatedAt, now), l.CreatedAt)
	s.lessons[l.ID] = &l
	s.markDirtyLocked(keyOf(KindLesson, l.ID, ""))
	if len(s.lessons) > s.opts.MaxLessons {
		s.trimLessonsLocked(s.opts.MaxLessons)
	}
	return l, true
}

// trimLessonsLocked keeps the limit most useful lessons. Global ones (the
// owner's, the agent's failures) rank above scoped ones, so that anyone
// who can send the agent corrections in private cannot push the owner's
// lessons out by sending many.
func (s *Store) trimLessonsLocked(limit int) {
	all := s.lessonsLocked()
	slices.SortFunc(all, func(a, b Lesson) int {
		return cmp.Or(
			boolRank(b.Enabled, a.Enabled),
			boolRank(b.LessonTier() == snowclaw.TierInternal, a.LessonTier() == snowclaw.TierInternal),
			cmp.Compare(b.Hits, a.Hits),
			cmp.Compare(b.UpdatedAt, a.UpdatedAt),
			strings.Compare(a.ID, b.ID),
		)
	})
	for _, l := range all[min(limit, len(all)):] {
		delete(s.lessons, l.ID)
		s.markRemovedLocked(keyOf(KindLesson, l.ID, ""))
	}
}

func boolRank(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func (s *Store) lessonsLocked() []Lesson {
	out := make([]Lesson, 0, len(s.lessons))
	for _, l := range s.lessons {
		out = append(out, *l)
	}
	return out
}

// Lessons returns copies of every lesson, newest first.
func (s *Store) Lessons() []Lesson {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.lessonsLocked()
	slices.SortFunc(out, func(a, b Lesson) int {
		return cmp.Or(cmp.Compare(b.UpdatedAt, a.UpdatedAt), strings.Compare(a.ID, b.ID))
	})
	return out
}

// Lesson returns a copy of one lesson.
func (s *Store) Lesson(id string) (Lesson, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lessons[id]; ok {
		return *l, true
	}
	return Lesson{}, false
}

// SetLessonEnabled switches a lesson on or off (`snowclaw memory lessons
// enable|disable`, docs/agent.md#the-owners-cli).
func (s *Store) SetLessonEnabled(id string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lessons[id]
	if !ok {
		return fmt.Errorf("lesson %q: %w", id, ErrNotFound)
	}
	if l.Enabled != on {
		l.Enabled = on
		l.UpdatedAt = max(l.UpdatedAt, s.now())
		s.markDirtyLocked(keyOf(KindLesson, id, ""))
	}
	return nil
}

// DeleteLesson removes a lesson and queues its event's deletion.
func (s *Store) DeleteLesson(id string) (Lesson, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lessons[id]
	if !ok {
		return Lesson{}, fmt.Errorf("lesson %q: %w", id, ErrNotFound)
	}
	delete(s.lessons, id)
	s.markRemovedLocked(keyOf(KindLesson, id, ""))
	return *l, nil
}

// TopLessons returns the texts of the n enabled lessons that were needed
// most often, newest first among equals, among those may accepts: what
// goes into the prompt of one reply, whose audience may decides.
func (s *Store) TopLessons(n int, may func(Lesson) bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var on []Lesson
	for _, l := range s.lessons {
		if l.Enabled && may(*l) {
			on = append(on, *l)
		}
	}
	slices.SortFunc(on, func(a, b Lesson) int {
		return cmp.Or(
			cmp.Compare(b.Hits, a.Hits),
			cmp.Compare(b.UpdatedAt, a.UpdatedAt),
			cmp.Compare(b.CreatedAt, a.CreatedAt),
			strings.Compare(a.ID, b.ID),
		)
	})
	out := make([]string, 0, min(max(n, 0), len(on)))
	for _, l := range on[:min(max(n, 0), len(on))] {
		out = append(out, l.Text)
	}
	return out
}

// EraseLessons removes the matching lessons without queueing deletions
// (see Erase) and returns them.
func (s *Store) EraseLessons(match func(Lesson) bool) []Lesson {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Lesson
	for id, l := range s.lessons {
		if match(*l) {
			out = append(out, *l)
			s.dropLessonLocked(id)
		}
	}
	slices.SortFunc(out, func(a, b Lesson) int { return strings.Compare(a.ID, b.ID) })
	return out
}
