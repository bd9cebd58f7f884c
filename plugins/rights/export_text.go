package rights

import (
	"strconv"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Text helpers of the export: what a record says and when it is dated.

func seenSummary(n memory.Npub) string {
	var b strings.Builder
	b.WriteString("First seen " + dateOf(n.FirstSeen))
	if n.FirstSeenGroup != "" {
		b.WriteString(" in group " + n.FirstSeenGroup)
	}
	b.WriteString("; last interaction " + dateOf(n.LastInteraction) + ".")
	if n.IsOwner {
		b.WriteString(" Owner of this agent.")
	}
	return b.String()
}

// eventText is what an export shows of an event: the caller's text, else
// the summary of a memory item's JSON, else the plain content. Ciphertext
// means nothing to the person, so it is replaced by a note.
func eventText(evt *snowclaw.Event, text string) string {
	if strings.TrimSpace(text) != "" {
		return text
	}
	if evt.Encrypted {
		return "(encrypted; could not be decrypted for this export)"
	}
	if m := snowclaw.DecodeMemory(evt.Content); evt.Kind == snowclaw.KindAppData && m.HasSummary() {
		return joinParagraphs(m.Summary, m.Detail, labelled("Context", m.Context))
	}
	return evt.Content
}

func unixUTC(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

func dateOf(sec int64) string {
	if sec <= 0 {
		return "unknown"
	}
	return time.Unix(sec, 0).UTC().Format("2006-01-02")
}

func labelled(label, s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return label + ": " + s
}

func joinParagraphs(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n")
}

// derivedID names a record that came without an id, stable across exports
// of the same data.
func derivedID(category string, r ExportRecord) string {
	return "rec:" + sha256Hex(category + "\x00" + r.Content + "\x00" + strconv.FormatInt(r.CreatedAt.Unix(), 10))[:16]
}

func shortHash(s string) string { return sha256Hex(s)[:12] }
