package memory

// The relay deletes events on its own: a moderator's delete-event, a
// delete-group, an author's NIP-09 request. When one of them is the
// agent's own record, RAM must follow, or the next flush writes the
// record again under a new id and the deletion is undone. Like Erase,
// these queue no NIP-09 request: the events are already gone.

// DropDeleted removes the record a deleted event carried (rec, as
// Decode read it), dirty or not: a version waiting for a flush would
// bring the deleted memory back. People's records are not dropped here:
// only the agent or the privacy service deletes them, and both change
// RAM themselves. It reports whether a record went.
func (s *Store) DropDeleted(rec Record) bool {
	if rec.count() != 1 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var had bool
	switch {
	case rec.Group != nil:
		if _, had = s.groups[rec.Group.ID]; had {
			s.dropGroupLocked(rec.Group.ID)
		}
	case rec.Item != nil:
		if _, had = s.items[rec.Item.ID]; had {
			s.dropItemLocked(rec.Item.ID)
		}
	case rec.Lesson != nil:
		if _, had = s.lessons[rec.Lesson.ID]; had {
			s.dropLessonLocked(rec.Lesson.ID)
		}
	}
	return had
}

// EraseGroup removes everything held about a deleted group: its record,
// its items and its lessons, written or still waiting for a flush. It
// returns how many items and lessons went.
func (s *Store) EraseGroup(g string) (items, lessons int) {
	if g == "" {
		return 0, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropGroupLocked(g)
	s.dropGroupFacetsLocked(g)
	for id, it := range s.items {
		if it.Group == g {
			s.dropItemLocked(id)
			items++
		}
	}
	for id, l := range s.lessons {
		if l.Group == g {
			s.dropLessonLocked(id)
			lessons++
		}
	}
	return items, lessons
}

func (s *Store) dropGroupLocked(id string) {
	delete(s.groups, id)
	r := ref{KindGroup, id}
	delete(s.dirty, r)
	delete(s.stamps, r)
}

func (s *Store) dropLessonLocked(id string) {
	delete(s.lessons, id)
	r := ref{KindLesson, id}
	delete(s.dirty, r)
	delete(s.stamps, r)
}
