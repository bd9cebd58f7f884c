package rights

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// categoryOrder is the order of the sections in Markdown; categories added
// under other names follow, alphabetically.
var categoryOrder = []string{CategoryProfile, CategoryPreference, CategoryLearnedContext, CategoryWorkPattern, CategoryConversation}

var categoryTitles = map[string]string{
	CategoryConversation:   "Conversation",
	CategoryPreference:     "Preferences",
	CategoryLearnedContext: "Learned context",
	CategoryWorkPattern:    "Work patterns",
	CategoryProfile:        "Profile",
}

// Markdown renders the export for a person to read (docs/privacy.md): a heading per category and one bullet per record with its date,
// where it lives (tier, group, topic), who it came from, its content and
// its id, which is what "forget id …" takes.
func (x *Export) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# What this agent keeps about %s\n\n", x.UserID)
	fmt.Fprintf(&b, "Exported %s · %d %s · export format %s\n",
		x.ExportedAt.UTC().Format("2006-01-02 15:04 MST"), x.RecordCount, plural(x.RecordCount, "record", "records"), x.ExportVersion)

	names := slices.Clone(categoryOrder)
	others := slices.Sorted(maps.Keys(x.Categories))
	for _, n := range others {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, name := range names {
		c := x.Categories[name]
		if c == nil {
			continue
		}
		title := categoryTitles[name]
		if title == "" {
			title = name
		}
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", title, len(c.Records))
		if len(c.Records) == 0 {
			b.WriteString("_Nothing._\n")
			continue
		}
		for _, r := range c.Records {
			writeBullet(&b, r)
		}
	}
	return b.String()
}

func writeBullet(b *strings.Builder, r ExportRecord) {
	var meta []string
	if r.CreatedAt.IsZero() {
		meta = append(meta, "undated")
	} else {
		meta = append(meta, r.CreatedAt.UTC().Format("2006-01-02 15:04"))
	}
	// "group · group g1" says nothing twice; the group names the tier.
	if r.Tier != "" && !(r.Tier == "group" && r.Group != "") {
		meta = append(meta, r.Tier)
	}
	if r.Group != "" {
		meta = append(meta, "group "+r.Group)
	}
	if r.Topic != "" {
		meta = append(meta, "topic `"+r.Topic+"`")
	}
	if r.Source != "" {
		meta = append(meta, "from "+r.Source)
	}
	fmt.Fprintf(b, "- **%s** — %s (id `%s`)\n", strings.Join(meta, " · "), indentLines(r.Content), r.MemoryID)
}

// indentLines keeps a multi-line content inside its bullet: continuation
// lines are indented, blank ones kept as paragraph breaks within the item.
func indentLines(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	if s == "" {
		return "_(empty)_"
	}
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] = strings.TrimRight(lines[i], " \t"); lines[i] != "" {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
