package search

import (
	"sort"
	"strings"
)

// Conflict is a topic on which sources disagree (seed 003's conflict
// dashboard): the current docs filed under Topic come from more than one
// source and do not all say the same thing. Docs are ordered by trust, then
// newest first, so Docs[0] is the one ranking would prefer.
type Conflict struct {
	Topic string
	Docs  []Doc
}

// Conflicts lists the conflicts on topic, or on every topic when topic is
// "". Old versions (superseded, or replaced at their address) never
// conflict with their successors. Volatile docs take part, so the caller
// must apply its visibility rule to the result as to search results.
func (ix *Index) Conflicts(topic string) []Conflict {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil
	}
	st := ix.st
	byTopic := make(map[string][]*Doc)
	for _, d := range st.docs {
		if d.Topic == "" || (topic != "" && d.Topic != topic) || st.hidden(d) {
			continue
		}
		byTopic[d.Topic] = append(byTopic[d.Topic], d)
	}
	var out []Conflict
	for t, docs := range byTopic {
		if !disagree(docs) {
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
			c.Docs = append(c.Docs, *cloneDoc(d))
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
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

func sourceOf(d *Doc) string {
	if d.Source != "" {
		return strings.ToLower(d.Source)
	}
	return strings.ToLower(d.Pubkey)
}

func normText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
