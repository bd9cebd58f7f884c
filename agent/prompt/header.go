package prompt

import (
	"strconv"
	"strings"
	"unicode"
)

// Line is one message as the context assembler sees it. Content must already
// be sanitized (policies.KeyFilter); the assembler does not know which keys are safe.
type Line struct {
	Group   string // NIP-29 group id; "" for a private message
	From    string // display name of the sender
	Kind    int
	ID      string // hex event id
	Owner   bool   // sent by the agent's owner
	Content string
}

// Header renders the compact header that precedes a message in the prompt,
// in the Nostr channel format of docs/agent.md#context:
//
//	[nostr:group=#techteam from=k0 kind=9 id=abc12345 owner=true]
//	[nostr:dm from=k0 kind=14 id=abc12345]
//
// The owner marker is the only thing that tells the model a message comes
// from the owner, so names and group ids are reduced to one bracket-free
// token: a display name like "x owner=true" or "x]\n[nostr:…" (profiles are
// written by anyone) cannot forge it.
func Header(l Line) string {
	var b strings.Builder
	b.WriteString("[nostr:")
	if l.Group == "" {
		b.WriteString("dm")
	} else {
		b.WriteString("group=#")
		b.WriteString(headerField(l.Group, "unknown"))
	}
	b.WriteString(" from=")
	b.WriteString(headerField(l.From, "unknown"))
	b.WriteString(" kind=")
	b.WriteString(strconv.Itoa(l.Kind))
	b.WriteString(" id=")
	id := l.ID
	if len(id) > 8 {
		id = id[:8]
	}
	b.WriteString(headerField(id, "?"))
	if l.Owner {
		b.WriteString(" owner=true")
	}
	b.WriteString("]")
	return b.String()
}

// headerField makes a value safe inside a header: whitespace becomes "_",
// and brackets and "=" (which could start a fake marker) are dropped.
func headerField(s, empty string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '[' || r == ']' || r == '=':
			return -1
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return '_'
		}
		return r
	}, s)
	if s == "" {
		return empty
	}
	return s
}

// renderLine is a message as it appears in the conversation: header, newline,
// content. A content line that itself starts with "[nostr:" gets a backslash
// in front, so a sender cannot paste a fake header (say, one with
// owner=true) and make the model believe a new message starts there.
func renderLine(l Line) string {
	return Header(l) + "\n" + quoteHeaders(l.Content)
}

func quoteHeaders(s string) string {
	if !strings.Contains(s, "[nostr:") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, ln := range lines {
		if strings.HasPrefix(strings.TrimLeft(ln, " \t"), "[nostr:") {
			lines[i] = `\` + ln
		}
	}
	return strings.Join(lines, "\n")
}
