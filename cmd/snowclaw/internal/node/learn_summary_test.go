package node_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
)

// The size trigger (docs/agent.md#consolidation-dreaming): a conversation whose unsummarized part passes
// summary_tokens has its oldest summary_share summarized at once, though
// it is days too young for the age trigger; the rest stays raw, and the
// summarized messages leave the prompt's history.
func TestLearn_SummaryBySizeOfConversation(t *testing.T) {
	s := &learnScript{}
	e := startLearnEnv(t, s, func(o *node.Options) {
		o.Agent.Learning.SummaryTokens = 60
		o.Agent.Learning.SummaryShare = 0.7
	})
	start := time.Now().Add(-time.Hour).Unix()
	var texts []string
	for i := range 8 {
		text := fmt.Sprintf("greenhouse log %d: the pumps moved %d litres of water to the lettuce beds", i, 100+i)
		evt := nostr.Event{Kind: 9, CreatedAt: nostr.Timestamp(start + int64(i)*60), Tags: nostr.Tags{{"h", agentGroup}}, Content: text}
		evt.Sign(e.bob.sk)
		e.mustPublish(e.bc, evt)
		texts = append(texts, text)
	}
	e.settle()
	if h := e.n.Agent().History(agentGroup); len(h) != len(texts) {
		t.Fatalf("buffered %d messages, want %d", len(h), len(texts))
	}
	calls := s.count()
	// the owner's view shows the newest summary: none yet
	if code, body := e.api(&e.owner, "GET", "/api/v1/agent/learning", nil); code != 200 || body["last_summary"] != nil {
		t.Fatalf("learning status before any summary: %d %v", code, body)
	}

	code, body := e.api(&e.owner, "POST", "/api/v1/agent/compact", map[string]int{})
	if code != 200 || body["summaries"] != 1.0 {
		t.Fatalf("compact: %d %v", code, body)
	}
	sums := e.itemsWhere("Week ")
	if len(sums) != 1 || !strings.Contains(sums[0].Topic, "/summary/") || !strings.Contains(sums[0].Topic, "-until-") {
		t.Fatalf("summary = %+v, want one summary of part of this week", sums)
	}
	code, body = e.api(&e.owner, "GET", "/api/v1/agent/learning", nil)
	last, _ := body["last_summary"].(map[string]any)
	if code != 200 || last == nil || last["id"] != sums[0].ID || last["topic"] != sums[0].Topic || last["group"] != agentGroup ||
		last["tier"] != "group" || last["text"] != sums[0].Text {
		t.Fatalf("learning status after the summary: %d %v, want the summary %+v", code, body["last_summary"], sums[0])
	}
	reqs := s.structuredSince(calls)
	if len(reqs) != 1 || !strings.Contains(reqs[0], texts[0]) || strings.Contains(reqs[0], texts[len(texts)-1]) {
		t.Fatalf("the summary request did not carry the oldest messages only: %q", reqs)
	}
	// the summarized messages left the history; the newest stayed raw
	h := e.n.Agent().History(agentGroup)
	if len(h) == 0 || len(h) >= len(texts) || h[len(h)-1].Content != texts[len(texts)-1] {
		t.Fatalf("history after the summary: %d messages", len(h))
	}
	for _, m := range h {
		if strings.Contains(reqs[0], m.Content) {
			t.Fatalf("a summarized message is still in the history: %q", m.Content)
		}
	}
	// what is left is under the threshold, and nothing is summarized twice
	if code, body = e.api(&e.owner, "POST", "/api/v1/agent/compact", map[string]int{}); code != 200 || body["summaries"] != 0.0 {
		t.Fatalf("second compact: %d %v", code, body)
	}
}
