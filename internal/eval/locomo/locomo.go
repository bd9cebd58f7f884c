// Package locomo turns the LoCoMo conversational-memory benchmark into
// search docs and queries and scores rankings by recall@5/10 and NDCG@10 of the evidence turns, so retrieval changes can be measured against one fixed number.
// The data file itself is not part of the project (its licence allows
// evaluation only); callers pass its path.
package locomo

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/snowclaw/snowclaw/search"
)

// Category names of the LoCoMo questions; 5 (adversarial) has no evidence
// and is skipped.
var CategoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

// Turn is one dialogue turn.
type Turn struct {
	DiaID   string
	Speaker string
	Text    string
	Session int
	At      int64 // session start plus the turn's position, in seconds
}

// Question is one evaluated question with its gold doc ids.
type Question struct {
	Text     string
	Category int
	Gold     []string
}

// Conversation is one sample: its turns and its answerable questions.
type Conversation struct {
	SampleID  string
	Turns     []Turn
	Questions []Question
}

type rawTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type rawQA struct {
	Question string          `json:"question"`
	Evidence []string        `json:"evidence"`
	Category int             `json:"category"`
	Answer   json.RawMessage `json:"answer"` // never read: retrieval must not see answers
}

type rawSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []rawQA                    `json:"qa"`
}

// Load reads a LoCoMo JSON file.
func Load(path string) ([]Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []rawSample
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("locomo: %s: %w", path, err)
	}
	out := make([]Conversation, 0, len(raw))
	for _, s := range raw {
		c, err := convert(s)
		if err != nil {
			return nil, fmt.Errorf("locomo: %s: %w", s.SampleID, err)
		}
		out = append(out, c)
	}
	return out, nil
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

func convert(s rawSample) (Conversation, error) {
	c := Conversation{SampleID: s.SampleID}
	var sessions []int
	for k := range s.Conversation {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	sort.Ints(sessions)
	valid := make(map[string]bool)
	for _, n := range sessions {
		var turns []rawTurn
		if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", n)], &turns); err != nil {
			return c, err
		}
		start := sessionTime(s.Conversation[fmt.Sprintf("session_%d_date_time", n)], n)
		for i, t := range turns {
			id := normalizeID(t.DiaID)
			if id == "" {
				id = t.DiaID
			}
			valid[id] = true
			c.Turns = append(c.Turns, Turn{DiaID: id, Speaker: t.Speaker, Text: t.Text, Session: n, At: start + int64(i)})
		}
	}
	for _, q := range s.QA {
		if CategoryNames[q.Category] == "" {
			continue
		}
		var gold []string
		seen := make(map[string]bool)
		for _, e := range q.Evidence {
			for _, part := range splitEvidence.Split(e, -1) {
				id := normalizeID(part)
				if id == "" || !valid[id] || seen[id] {
					continue
				}
				seen[id] = true
				gold = append(gold, DocID(c.SampleID, id))
			}
		}
		if len(gold) == 0 {
			continue
		}
		c.Questions = append(c.Questions, Question{Text: q.Question, Category: q.Category, Gold: gold})
	}
	return c, nil
}

var (
	splitEvidence = regexp.MustCompile(`[;,\s]+`)
	evidenceID    = regexp.MustCompile(`^D:?(\d+):(\d+)$`)
)

// normalizeID reads "D:11:26" as "D11:26" and "D30:05" as "D30:5"; it
// returns "" for anything that is not a dialogue id.
func normalizeID(s string) string {
	m := evidenceID.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return ""
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("D%d:%d", a, b)
}

// sessionTime parses "1:56 pm on 8 May, 2023"; an unreadable date falls
// back to a day per session, which keeps turns in order.
func sessionTime(raw json.RawMessage, n int) int64 {
	var s string
	_ = json.Unmarshal(raw, &s)
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006"} {
		if t, err := time.Parse(layout, strings.ToLower(s)); err == nil {
			return t.Unix()
		}
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix()
		}
	}
	return int64(n) * 86400
}

// DocID is the search doc id of a turn.
func DocID(sampleID, diaID string) string { return sampleID + "/" + diaID }

// Docs makes one search doc per turn, shaped like the group chat messages
// the relay indexes: kind 9 in one group per conversation, in time order.
func (c Conversation) Docs() []search.Doc {
	docs := make([]search.Doc, 0, len(c.Turns))
	for _, t := range c.Turns {
		docs = append(docs, search.Doc{
			ID:        DocID(c.SampleID, t.DiaID),
			Kind:      9,
			Pubkey:    t.Speaker,
			CreatedAt: t.At,
			Text:      t.Speaker + ": " + t.Text,
			Tier:      "group",
			Group:     c.SampleID,
			Source:    t.Speaker,
		})
	}
	return docs
}
