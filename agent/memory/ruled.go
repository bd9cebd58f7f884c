package memory

import "maps"

// The owner's ruling on a conflict (plugins/memory) is a memory the agent
// signs at snow:memory:<topic>, replacing whatever event of the agent held
// that address. The agent keeps no ruling as an item, so the topic is
// marked ruled instead: the item that stood there leaves RAM, as it would
// at a restart, and no item is stored there again, since its flush would
// write over the ruling and undo it without a word.

// Rule marks topic as held by the owner's ruling and drops the items at
// it, which it returns. Nothing is queued for deletion: the ruling
// replaced their event.
func (s *Store) Rule(topic string) []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ruled == nil {
		s.ruled = make(map[string]bool)
	}
	s.ruled[topic] = true
	var out []Item
	for id, it := range maps.Clone(s.items) {
		if it.Topic == topic {
			out = append(out, *it)
			s.dropItemLocked(id)
		}
	}
	return out
}
