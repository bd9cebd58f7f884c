package node_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/ollama/ollama/api"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/learn"
	"github.com/snowclaw/snowclaw/agent/llm/llmtest"
	agentmem "github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/testwait"
)

// learnRule scripts one extraction: when a message of the batch contains
// trigger, the fake model answers that it holds memory text.
type learnRule struct {
	trigger, text, kind, about string
	topics                     []string
}

// learnScript is the fake model of the learning tests: chat replies are
// "ack", structured requests (learning's) are answered from the rules by
// the schema they carry. decide answers UPDATE of the first memory shown
// for candidates containing one of update, else ADD. Every structured
// request is kept for the tests to inspect.
type learnScript struct {
	rules  []learnRule
	update []string
	// updateTo: a candidate containing the key is an UPDATE of the shown
	// memory whose line contains the value (else as update)
	updateTo map[string]string
	broken   int // answer this many extraction requests with broken JSON first

	mu         sync.Mutex
	structured []api.ChatRequest
}

var (
	msgNumRE  = regexp.MustCompile(`(?m)^\[(\d+)\] `)
	memIDRE   = regexp.MustCompile(`- id ([0-9a-f]{12}) `)
	candRE    = regexp.MustCompile(`(?m)^Candidate (\d+): (.*)$`)
	userOfReq = func(req api.ChatRequest) string { return req.Messages[len(req.Messages)-1].Content }
)

func (s *learnScript) reply(req api.ChatRequest) (string, error) {
	if !llmtest.Structured(req) {
		return "ack from the model", nil
	}
	s.mu.Lock()
	s.structured = append(s.structured, req)
	broken := s.broken > 0 && strings.Contains(string(req.Format), `"memories"`)
	if broken {
		s.broken--
	}
	s.mu.Unlock()
	user := userOfReq(req)
	switch f := string(req.Format); {
	case broken:
		return `{"memories": [{"text": "half an answ`, nil
	case strings.Contains(f, `"memories"`):
		var out []map[string]any
		for _, r := range s.rules {
			at := strings.Index(user, r.trigger)
			if at < 0 {
				continue
			}
			num := 1
			for _, m := range msgNumRE.FindAllStringSubmatchIndex(user[:at], -1) {
				fmt.Sscan(user[m[2]:m[3]], &num)
			}
			about := r.about
			if about == "" {
				about = "sender"
			}
			m := map[string]any{"text": r.text, "kind": r.kind, "message": num, "about": about, "confidence": 0.8}
			if r.topics != nil {
				m["topics"] = r.topics
			}
			out = append(out, m)
		}
		b, _ := json.Marshal(map[string]any{"memories": out})
		return string(b), nil
	case strings.Contains(f, `"decisions"`):
		var out []map[string]any
		for _, block := range strings.Split(user, "\n\n") {
			c := candRE.FindStringSubmatch(block)
			if c == nil {
				continue
			}
			var n int
			fmt.Sscan(c[1], &n)
			d := map[string]any{"candidate": n, "action": "ADD"}
			for _, u := range s.update {
				if ids := memIDRE.FindStringSubmatch(block); strings.Contains(c[2], u) && ids != nil {
					d["action"], d["target"] = "UPDATE", ids[1]
				}
			}
			for cand, target := range s.updateTo {
				for _, l := range strings.Split(block, "\n") {
					if ids := memIDRE.FindStringSubmatch(l); strings.Contains(c[2], cand) && ids != nil && strings.Contains(l, target) {
						d["action"], d["target"] = "UPDATE", ids[1]
					}
				}
			}
			out = append(out, d)
		}
		b, _ := json.Marshal(map[string]any{"decisions": out})
		return string(b), nil
	case strings.Contains(f, `"summary"`):
		return `{"summary": "The crew planned the moon base launch."}`, nil
	}
	return "{}", nil
}

// structuredText is every structured request's messages, joined.
func (s *learnScript) structuredText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.structured {
		for _, m := range r.Messages {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

func (s *learnScript) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.structured)
}

// withLearning turns learning on with a short debounce.
func withLearning(callsPerHour int) func(*node.Options) {
	return func(o *node.Options) {
		o.Agent.Learning = learn.Options{Enabled: true, Debounce: 20 * time.Millisecond, BatchSize: 20, CallsPerHour: callsPerHour}
		o.MetricsToken = metricsToken
	}
}

// The conversations are dated hours and weeks back, as the history of a
// group moved from another relay is: the relay takes them as it would
// that history (AcceptMovedGroups lifts NIP-29's late-publication rule).
func startLearnEnv(t *testing.T, s *learnScript, mods ...func(*node.Options)) *agentEnv {
	t.Helper()
	history := func(o *node.Options) { o.AcceptMovedGroups = true }
	return startAgentEnvWith(t, s.reply, append([]func(*node.Options){withLearning(100), history}, mods...)...)
}

// itemsWhere returns the agent's items whose text contains sub.
func (e *agentEnv) itemsWhere(sub string) []agentmem.Item {
	var out []agentmem.Item
	for _, it := range e.n.Agent().Items() {
		if strings.Contains(it.Text, sub) {
			out = append(out, it)
		}
	}
	return out
}

// lastChatPrompt is the last reply prompt (not a learning request).
func (e *agentEnv) lastChatPrompt() string {
	reqs := e.llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !llmtest.Structured(reqs[i]) {
			var parts []string
			for _, m := range reqs[i].Messages {
				parts = append(parts, m.Content)
			}
			return strings.Join(parts, "\n")
		}
	}
	return ""
}

// waitChats waits until n reply prompts reached the model.
func (e *agentEnv) waitChats(n int) {
	e.t.Helper()
	got := 0
	if !testwait.Until(testwait.DefaultTimeout, func() bool {
		got = 0
		for _, r := range e.llm.Requests() {
			if !llmtest.Structured(r) {
				got++
			}
		}
		return got >= n
	}) {
		e.t.Fatalf("%d reply prompts, want %d", got, n)
	}
}

func TestLearn_GroupDecisionBecomesGroupMemory(t *testing.T) {
	s := &learnScript{rules: []learnRule{{trigger: "launch on the twelfth", text: "The crew decided to launch on 2026-12-12", kind: "decision", about: "conversation", topics: []string{"launch"}}}}
	e := startLearnEnv(t, s)
	e.say(e.ac, e.alice, "ok everyone: we launch on the twelfth of December, final")
	e.settle()
	got := e.itemsWhere("decided to launch")
	if len(got) != 1 {
		t.Fatalf("items = %+v", e.n.Agent().Items())
	}
	it := got[0]
	if it.Tier != snowclaw.TierGroup || it.Group != agentGroup || it.Source != agentmem.SourceAgent {
		t.Fatalf("decision stored as %+v, want a group memory of %s", it, agentGroup)
	}
	snap, _ := e.n.Agent().Get(mustSubject(t, "group:"+agentGroup))
	if snap.Group == nil || !containsDecision(snap.Group.Decisions, "decided to launch") || !contains2(snap.Group.Themes, "launch") {
		t.Fatalf("group record = %+v", snap.Group)
	}
	// a member finds it through NIP-50; a stranger does not
	if res := search(t, e.testEnv, &e.bob, nostr.Filter{Search: "decided launch"}); len(res) == 0 {
		t.Fatal("a member cannot find the group's learnt decision")
	}
	stranger := newUser()
	if res := search(t, e.testEnv, &stranger, nostr.Filter{Search: "decided launch"}); len(res) != 0 {
		t.Fatalf("a stranger finds the group's memory: %v", ids(res))
	}
}

func containsDecision(ds []agentmem.Decision, sub string) bool {
	for _, d := range ds {
		if strings.Contains(d.Text, sub) {
			return true
		}
	}
	return false
}

func contains2(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestLearn_MovedToBerlinSupersedesParis(t *testing.T) {
	s := &learnScript{
		rules: []learnRule{
			{trigger: "I live in Paris", text: "alice lives in Paris", kind: "fact"},
			{trigger: "moved to Berlin", text: "alice lives in Berlin", kind: "fact"},
		},
		update: []string{"Berlin"},
	}
	e := startLearnEnv(t, s)
	e.say(e.ac, e.alice, "hi all, I live in Paris")
	e.settle()
	paris := e.itemsWhere("Paris")
	if len(paris) != 1 {
		t.Fatalf("after Paris: items %+v", e.n.Agent().Items())
	}
	e.say(e.ac, e.alice, "news: I moved to Berlin last month")
	e.settle()
	if left := e.itemsWhere("Paris"); len(left) != 0 {
		t.Fatalf("the old fact is still current: %+v", left)
	}
	berlin := e.itemsWhere("Berlin")
	if len(berlin) != 1 || berlin[0].Version != 2 || berlin[0].Supersedes == "" || berlin[0].Subject != e.alice.pk {
		t.Fatalf("new version = %+v", berlin)
	}
	// history kept: the Paris event is still on the relay, hidden from
	// search unless asked for
	old, _ := fetch(t, e.ac, nostr.Filter{IDs: []string{berlin[0].Supersedes}})
	if len(old) != 1 {
		t.Fatalf("the superseded version %s is gone from the relay", berlin[0].Supersedes)
	}
	if res := search(t, e.testEnv, &e.alice, nostr.Filter{Search: "alice lives"}); contains(res, old[0].ID) || len(res) == 0 {
		t.Fatalf("search for the current fact: %v (old %s)", ids(res), old[0].ID[:8])
	}
	if res := search(t, e.testEnv, &e.alice, nostr.Filter{Search: "alice lives include:superseded"}); !contains(res, old[0].ID) {
		t.Fatalf("include:superseded lacks the old version: %v", ids(res))
	}
	// the decision saw the old memory: the model was asked, not bypassed
	if !strings.Contains(s.structuredText(), "alice lives in Paris") {
		t.Fatal("the decide step never showed the model the similar memory")
	}
}

func TestLearn_RelativeDateStoredAbsolute(t *testing.T) {
	s := &learnScript{rules: []learnRule{
		{trigger: "dentist", text: "alice has a dentist appointment next Friday", kind: "event"},
		{trigger: "rocket test", text: "The rocket test is tomorrow", kind: "plan", about: "conversation"},
	}}
	e := startLearnEnv(t, s)
	written := time.Now().UTC().Add(-2 * time.Hour)
	evt := nostr.Event{Kind: 9, CreatedAt: nostr.Timestamp(written.Unix()), Tags: nostr.Tags{{"h", agentGroup}}, Content: "I have the dentist next Friday, and the rocket test is tomorrow"}
	evt.Sign(e.alice.sk)
	e.mustPublish(e.ac, evt)
	e.settle()
	day := time.Date(written.Year(), written.Month(), written.Day(), 0, 0, 0, 0, time.UTC)
	friday := day.AddDate(0, 0, 1)
	for friday.Weekday() != time.Friday {
		friday = friday.AddDate(0, 0, 1)
	}
	tomorrow := day.AddDate(0, 0, 1)
	for sub, want := range map[string]time.Time{"dentist": friday, "rocket": tomorrow} {
		got := e.itemsWhere(sub)
		if len(got) != 1 {
			t.Fatalf("%s: items %+v", sub, e.n.Agent().Items())
		}
		if d := want.Format(time.DateOnly); !strings.Contains(got[0].Text, d) || strings.Contains(got[0].Text, "next Friday") || strings.Contains(got[0].Text, "tomorrow") {
			t.Errorf("%s stored as %q, want the absolute date %s", sub, got[0].Text, d)
		}
	}
}

func TestLearn_FrozenPersonGetsNothingStored(t *testing.T) {
	s := &learnScript{rules: []learnRule{
		{trigger: "I love jazz", text: "alice loves jazz", kind: "preference"},
		{trigger: "I love opera", text: "bob loves opera", kind: "preference"},
	}}
	e := startLearnEnv(t, s)
	if err := e.n.Agent().Freeze(t.Context(), e.alice.pk, true); err != nil {
		t.Fatal(err)
	}
	e.say(e.ac, e.alice, "I love jazz, for the record")
	e.say(e.bc, e.bob, "and I love opera")
	e.settle()
	if got := e.itemsWhere("jazz"); len(got) != 0 {
		t.Fatalf("a frozen person's preference was stored: %+v", got)
	}
	if got := e.itemsWhere("opera"); len(got) != 1 {
		t.Fatalf("bob's preference was not learnt (the test's control): %+v", e.n.Agent().Items())
	}
	if strings.Contains(s.structuredText(), "jazz") {
		t.Fatal("a frozen person's words were sent to the model")
	}
}

func TestLearn_BudgetStopsCallsAndMetricShowsIt(t *testing.T) {
	s := &learnScript{rules: []learnRule{{trigger: "first", text: "alice said the first thing", kind: "fact"}}}
	e := startLearnEnv(t, s, withLearning(1))
	e.say(e.ac, e.alice, "the first thing")
	e.settle()
	e.say(e.bc, e.bob, "the second thing")
	e.settle()
	if n := s.count(); n != 1 {
		t.Fatalf("%d learning calls with a budget of 1 per hour", n)
	}
	m := e.scrape()
	if m["snowclaw_agent_learning_calls_total"] != 1 || m["snowclaw_agent_learning_skipped_budget_total"] != 1 {
		t.Fatalf("metrics: calls %v, skipped %v", m["snowclaw_agent_learning_calls_total"], m["snowclaw_agent_learning_skipped_budget_total"])
	}
	if m["snowclaw_agent_learning_prompt_tokens_total"] <= 0 {
		t.Fatalf("prompt tokens not counted: %v", m["snowclaw_agent_learning_prompt_tokens_total"])
	}
}

func TestLearn_InvalidJSONRetriedOnceThenDropped(t *testing.T) {
	for _, tc := range []struct {
		name       string
		broken     int
		wantCalls  int
		wantStored bool
	}{
		{"broken once, then fine", 1, 2, true},
		{"broken twice: dropped", 2, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &learnScript{broken: tc.broken, rules: []learnRule{{trigger: "kombucha", text: "alice brews kombucha", kind: "fact"}}}
			e := startLearnEnv(t, s)
			e.say(e.ac, e.alice, "I brew kombucha at home")
			e.settle()
			if n := s.count(); n != tc.wantCalls {
				t.Fatalf("%d learning calls, want %d", n, tc.wantCalls)
			}
			if got := len(e.itemsWhere("kombucha")) == 1; got != tc.wantStored {
				t.Fatalf("stored = %v, want %v", got, tc.wantStored)
			}
			if m := e.scrape(); m["snowclaw_agent_learning_errors_total"] != float64(tc.broken) {
				t.Fatalf("errors metric = %v, want %d", m["snowclaw_agent_learning_errors_total"], tc.broken)
			}
			if v := e.llm.Violations(); len(v) != tc.broken {
				t.Fatalf("the fake saw %d answers breaking the format, want %d", len(v), tc.broken)
			}
		})
	}
}

// structuredSince is the text of each structured request after the first n.
func (s *learnScript) structuredSince(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.structured[min(n, len(s.structured)):] {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Content + "\n")
		}
		out = append(out, b.String())
	}
	return out
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestLearn_CompactMergesDuplicateKeepsHistoryAndSummarizesOldWeeks(t *testing.T) {
	s := &learnScript{rules: []learnRule{
		{trigger: "I like green tea", text: "alice likes green tea", kind: "preference"},
		{trigger: "really like green tea", text: "alice really likes green tea", kind: "preference"},
	}}
	e := startLearnEnv(t, s)
	e.say(e.ac, e.alice, "I like green tea")
	e.settle()
	e.say(e.ac, e.alice, "did I say I really like green tea?")
	e.settle()
	if got := e.itemsWhere("green tea"); len(got) != 2 {
		t.Fatalf("want two near-duplicate memories before compaction, got %+v", got)
	}
	older := e.itemsWhere("alice likes green tea")[0]
	var olderEvt string
	for _, r := range search(t, e.testEnv, &e.alice, nostr.Filter{Search: "green tea", Kinds: []int{30078}}) {
		if strings.HasSuffix(r.Tags.GetD(), older.ID) {
			olderEvt = r.ID
		}
	}
	if olderEvt == "" {
		t.Fatal("the older memory is not searchable before compaction")
	}
	// conversation fifteen days ago, for the weekly summary: its week
	// ended more than summary_after (7 days) ago whatever today's weekday
	// (ten days ago is in a week that has not, on a Thursday)
	old := time.Now().Add(-15 * 24 * time.Hour)
	for i, text := range []string{"the moon base needs a greenhouse", "we will grow lettuce there"} {
		evt := nostr.Event{Kind: 9, CreatedAt: nostr.Timestamp(old.Unix() + int64(i)), Tags: nostr.Tags{{"h", agentGroup}}, Content: text}
		evt.Sign(e.bob.sk)
		e.mustPublish(e.bc, evt)
	}
	e.settle()

	code, body := e.api(&e.owner, "POST", "/api/v1/agent/compact", map[string]int{})
	if code != 200 || body["merged"] != 1.0 || body["summaries"].(float64) < 1 {
		t.Fatalf("compact: %d %v", code, body)
	}
	left := e.itemsWhere("green tea")
	if len(left) != 1 || left[0].ID == older.ID || !slices.Contains(left[0].Merges, olderEvt) {
		t.Fatalf("after compaction: %+v (older event %s)", left, olderEvt[:8])
	}
	// the original stays on the relay as history, out of search
	if evs, _ := fetch(t, e.ac, nostr.Filter{IDs: []string{olderEvt}}); len(evs) != 1 {
		t.Fatal("the merged original was deleted from the relay")
	}
	for _, r := range search(t, e.testEnv, &e.alice, nostr.Filter{Search: "green tea", Kinds: []int{30078}}) {
		if r.ID == olderEvt {
			t.Fatal("the merged original is still ranked by search")
		}
	}
	sums := e.itemsWhere("Week ")
	if len(sums) != 1 || sums[0].Tier != snowclaw.TierGroup || sums[0].Group != agentGroup || !strings.Contains(sums[0].Topic, "/summary/") {
		t.Fatalf("weekly summary = %+v", sums)
	}
	if !strings.Contains(s.structuredText(), "we will grow lettuce there") {
		t.Fatal("the summary request did not carry the old week's messages")
	}
	// a second run finds nothing more to do
	if code, body = e.api(&e.owner, "POST", "/api/v1/agent/compact", map[string]int{}); code != 200 || body["merged"] != 0.0 || body["summaries"] != 0.0 {
		t.Fatalf("second compact: %d %v", code, body)
	}
}

func TestLearn_StatusSaysWhatLearningDoes(t *testing.T) {
	e := startAgentEnv(t) // a model, but learning not turned on
	code, body := e.api(&e.owner, "GET", "/api/v1/agent/learning", nil)
	if code != 200 || body["enabled"] != false || !strings.Contains(fmt.Sprint(body["why"]), "turned off") {
		t.Fatalf("status with learning off: %d %v", code, body)
	}
	s := &learnScript{}
	e2 := startLearnEnv(t, s)
	code, body = e2.api(&e2.owner, "GET", "/api/v1/agent/learning", nil)
	if code != 200 || body["enabled"] != true || body["calls_per_hour"] != 100.0 || body["model"] != "ollama/test-model" {
		t.Fatalf("status with learning on: %d %v", code, body)
	}
	if code, _ := e2.api(&e2.alice, "GET", "/api/v1/agent/learning", nil); code != 403 {
		t.Fatalf("alice reads learning status: %d", code)
	}
}

// settle0 waits until the agent has handled every event fed to it,
// without waiting for learning's debounced batches (Idle would).
func (e *agentEnv) settle0() {
	e.t.Helper()
	testwait.For(e.t, "the agent to handle what it was fed", func() bool {
		st := e.n.Agent().Stats()
		return st.Handled >= st.Fed
	})
}
