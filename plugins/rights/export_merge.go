package rights

import (
	"cmp"
	"slices"
	"strings"
)

// put adds r to category, or merges it into the record it duplicates: the
// same memory id, or the same d tag (an item in the agent's memory and its
// stored event). It reports whether a new record was added.
func (x *Export) put(category string, r ExportRecord, addr string, rank int) bool {
	r.CreatedAt = r.CreatedAt.UTC().Round(0)
	r.TopicTags = slices.Clone(r.TopicTags)
	if r.MemoryID == "" {
		r.MemoryID = derivedID(category, r)
	}
	keys := []string{"id:" + r.MemoryID}
	if addr != "" {
		keys = append(keys, "addr:"+addr)
	}
	canon := ""
	for _, k := range keys {
		if c, ok := x.alias[k]; ok {
			canon = c
			break
		}
	}
	if canon == "" {
		x.insert(category, r, rank)
		for _, k := range keys {
			x.alias[k] = r.MemoryID
		}
		return true
	}

	oldCat, oldRank := x.where[canon], x.rank[canon]
	old, _ := x.remove(canon)
	merged, cat := fillGaps(old, r), oldCat
	if rank > oldRank {
		merged, cat = fillGaps(r, old), category
	}
	// Keep the event id when one side has it: that is the id "forget"
	// understands.
	merged.MemoryID = old.MemoryID
	if isEventID(r.MemoryID) && !isEventID(old.MemoryID) {
		merged.MemoryID = r.MemoryID
		for k, v := range x.alias {
			if v == canon {
				x.alias[k] = merged.MemoryID
			}
		}
	}
	x.insert(cat, merged, max(rank, oldRank))
	for _, k := range keys {
		x.alias[k] = merged.MemoryID
	}
	return false
}

// fillGaps returns a with its empty fields taken from b.
func fillGaps(a, b ExportRecord) ExportRecord {
	a.Content = cmp.Or(a.Content, b.Content)
	a.Tier = cmp.Or(a.Tier, b.Tier)
	a.Topic = cmp.Or(a.Topic, b.Topic)
	a.Group = cmp.Or(a.Group, b.Group)
	a.Source = cmp.Or(a.Source, b.Source)
	a.Kind = cmp.Or(a.Kind, b.Kind)
	if a.CreatedAt.IsZero() {
		a.CreatedAt = b.CreatedAt
	}
	if len(a.TopicTags) == 0 {
		a.TopicTags = slices.Clone(b.TopicTags)
	}
	return a
}

func isEventID(s string) bool { return len(s) == 64 && isHex(s) }

// insert keeps each category sorted by time, then id, so an export of the
// same data comes out the same whatever order it was gathered in.
func (x *Export) insert(category string, r ExportRecord, rank int) {
	c := x.Categories[category]
	if c == nil {
		c = &Category{Records: []ExportRecord{}}
		x.Categories[category] = c
	}
	i, _ := slices.BinarySearchFunc(c.Records, r, compareRecords)
	c.Records = slices.Insert(c.Records, i, r)
	c.Count = len(c.Records)
	x.RecordCount++
	x.where[r.MemoryID] = category
	x.rank[r.MemoryID] = rank
}

func (x *Export) remove(id string) (ExportRecord, bool) {
	cat := x.where[id]
	c := x.Categories[cat]
	if c == nil {
		return ExportRecord{}, false
	}
	i := slices.IndexFunc(c.Records, func(r ExportRecord) bool { return r.MemoryID == id })
	if i < 0 {
		return ExportRecord{}, false
	}
	r := c.Records[i]
	c.Records = slices.Delete(c.Records, i, i+1)
	c.Count = len(c.Records)
	x.RecordCount--
	delete(x.where, id)
	delete(x.rank, id)
	return r, true
}

func compareRecords(a, b ExportRecord) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.MemoryID, b.MemoryID))
}
