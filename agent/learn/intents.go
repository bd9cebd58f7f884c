package learn

import (
	"regexp"
	"strings"
)

// intentKind is what a message explicitly asks of the agent's memory
// (written at once: docs/agent.md#learning-when-told).
type intentKind int

const (
	intentNone intentKind = iota
	intentRemember
	intentForget
	intentCorrection
)

// intent is a parsed explicit request; text is what to remember or
// forget, or the correction.
type intent struct {
	kind intentKind
	text string
}

var (
	// a leading address to the agent: "@snowclaw", "snowclaw,", "hey snowclaw:",
	// "nostr:npub1…"
	leadingMention = regexp.MustCompile(`(?i)^\s*(?:(?:hey|hi|ok|okay)\s+)?(?:@?\S+[,:]|@\S+|nostr:npub1[02-9ac-hj-np-z]+)\s*`)

	rememberRE = []*regexp.Regexp{
		regexp.MustCompile(`(?is)^(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[\s:,]+(.+)$`),
		regexp.MustCompile(`(?s)^(?:请)?记住(?:了)?[：:，,\s]*(.+)$`),
	}
	forgetRE = []*regexp.Regexp{
		regexp.MustCompile(`(?is)^(?:please\s+)?forget(?:\s+(?:that|about|what you know about))?[\s:,]+(.+)$`),
		regexp.MustCompile(`(?s)^(?:请)?忘(?:记|掉)(?:了)?[：:，,\s]*(.+)$`),
	}
	correctionRE = []*regexp.Regexp{
		regexp.MustCompile(`(?is)^(?:no[,.!]?\s+)?(?:that'?s|that is|you'?re|you are|this is)\s+(?:wrong|incorrect|not right|not true|mistaken)\b[\s,.:;!-]*(.*)$`),
		regexp.MustCompile(`(?is)^(?:correction|actually)[,:]\s*(.+)$`),
		regexp.MustCompile(`(?s)^(?:不对|错了|你错了|不是这样)[。，,！!：:\s]*(.*)$`),
	}
)

// parseIntent reads an explicit memory request off a (sanitized) message,
// after an optional leading address to the agent.
func parseIntent(text, agentName string) intent {
	s := strings.TrimSpace(text)
	if m := leadingMention.FindString(s); m != "" && mentionsName(m, agentName) {
		s = strings.TrimSpace(s[len(m):])
	}
	for _, re := range rememberRE {
		if m := re.FindStringSubmatch(s); m != nil {
			if t := cleanIntentText(m[1]); t != "" {
				return intent{intentRemember, t}
			}
		}
	}
	for _, re := range forgetRE {
		if m := re.FindStringSubmatch(s); m != nil {
			if t := cleanIntentText(m[1]); t != "" {
				return intent{intentForget, t}
			}
		}
	}
	for _, re := range correctionRE {
		if m := re.FindStringSubmatch(s); m != nil {
			return intent{intentCorrection, cleanIntentText(s)}
		}
	}
	return intent{}
}

// mentionsName tells an address to the agent from any leading word
// followed by a comma ("Alice, remember…" is not for us to strip).
func mentionsName(prefix, name string) bool {
	p := strings.ToLower(prefix)
	return strings.Contains(p, strings.ToLower(name)) || strings.Contains(p, "npub1")
}

func cleanIntentText(s string) string {
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ".。!！"))
}
