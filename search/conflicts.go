package search

import (
	"slices"
	"sort"
	"strings"
)

// Conflict is a topic on which sources disagree (the conflict dashboard,
// docs/api.md#get-apiv1conflictstopic): the current docs filed under Topic come from more than one
// source and do not all say the same thing. Docs are ordered by trust, then
// newest first, so Docs[0] is the one ranking would prefer.
type Conflict struct {
	Topic string
	Docs  []Doc
	// History are versions that Docs superseded although they were learnt
	// from someone else: alice said the launch is on May 3,
	// bob that it moved, and the agent wrote bob's as the new version.
	// Nobody overwrote anyone silently, but the sources differ, so the
	// pair is listed until the owner rules. Newest first. A conflict with
	// one doc and some history was resolved by supersession.
	History []Doc
}

// Conflicts lists the conflicts on topic, or on every topic when topic is
// "", among the docs in scopes readable admits (nil: all) that accept
// takes (nil: all). Both filters apply before disagreement is judged: a
// doc the reader may not read neither makes nor counts towards a
// conflict. Old versions (superseded, or replaced at their address) never
// conflict with their successors, except as History: the version a doc
// replaced (Doc.Version 2 or more, its first snow:supersedes) by the same
// signer, learnt from another person, saying something else.
func (ix *Index) Conflicts(topic string, readable func(scope string) bool, accept func(Doc) bool) (out []Conflict, err error) {
	defer recoverAs(&err, "conflicts")
	if ix.broken.Load() {
		return nil, ErrBroken
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	st := ix.st
	v := st.parts.view(readable, st.docs)
	byTopic := make(map[string][]*Doc)
	for _, d := range st.docs {
		if d.Topic == "" || (topic != "" && d.Topic != topic) || st.hidden(d) || !v.has(d.ID) {
			continue
		}
		if accept != nil {
			if e, _ := st.export(d, false); !accept(e) {
				continue
			}
		}
		byTopic[d.Topic] = append(byTopic[d.Topic], d)
	}
	// disagreement and history compare texts: a topic that may have
	// either has its docs read back whole (doctext.go); the others cannot
	// conflict and need no text
	for t, docs := range byTopic {
		if !severalSources(docs) && !slices.ContainsFunc(docs, mayReplaceFrom) {
			delete(byTopic, t)
			continue
		}
		for i, d := range docs {
			if docs[i], err = st.full(d); err != nil {
				return nil, err
			}
		}
	}
	for t, docs := range byTopic {
		var history []*Doc
		for _, d := range docs {
			old, err := st.replacedFrom(d)
			if err != nil {
				return nil, err
			}
			if old != nil && v.has(old.ID) && (accept == nil || accept(*old)) {
				history = append(history, old)
			}
		}
		if len(history) == 0 && !disagree(docs) {
			continue
		}
		sort.Slice(docs, func(i, j int) bool {
			ti, tj := ix.trust(docs[i]), ix.trust(docs[j])
			if ti != tj {
				return ti > tj
			}
			if docs[i].CreatedAt != docs[j].CreatedAt {
				return docs[i].CreatedAt > docs[j].CreatedAt
			}
			return docs[i].ID < docs[j].ID
		})
		c := Conflict{Topic: t}
		for _, d := range docs {
			c.Docs = append(c.Docs, *d) // full: a copy of its own
		}
		sort.Slice(history, func(i, j int) bool { return history[i].CreatedAt > history[j].CreatedAt })
		for _, d := range history {
			c.History = append(c.History, *d) // full: a copy of its own
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out, nil
}

// disagree: at least two sources, and two docs from different sources
// whose texts differ once case and spacing are ignored.
func disagree(docs []*Doc) bool {
	for i := range docs {
		for j := i + 1; j < len(docs); j++ {
			if sourceOf(docs[i]) != sourceOf(docs[j]) && normText(docs[i].Text) != normText(docs[j].Text) {
				return true
			}
		}
	}
	return false
}

func severalSources(docs []*Doc) bool {
	for _, d := range docs[1:] {
		if sourceOf(d) != sourceOf(docs[0]) {
			return true
		}
	}
	return false
}

func sourceOf(d *Doc) string {
	if d.Source != "" {
		return strings.ToLower(d.Source)
	}
	return strings.ToLower(d.Pubkey)
}

func normText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// mayReplaceFrom: d names a version it replaced (replacedFrom may find
// one).
func mayReplaceFrom(d *Doc) bool {
	return d.Version >= 2 && len(d.Supersedes) > 0 && d.LearntFrom != ""
}

// replacedFrom is the version d (a full doc) replaced when it was learnt
// from another person and says something else, whole; nil otherwise. Only
// a version by d's own signer counts: anyone may name anyone's event in
// snow:supersedes.
func (s *state) replacedFrom(d *Doc) (*Doc, error) {
	if !mayReplaceFrom(d) {
		return nil, nil
	}
	old := s.docs[d.Supersedes[0]]
	if old == nil || old.Pubkey != d.Pubkey || old.LearntFrom == "" || strings.EqualFold(old.LearntFrom, d.LearntFrom) {
		return nil, nil
	}
	full, err := s.full(old) // its text is compared, and shown
	if err != nil || normText(full.Text) == normText(d.Text) {
		return nil, err
	}
	return full, nil
}
