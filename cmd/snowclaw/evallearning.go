package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/learn"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/cmd/snowclaw/internal/node"
	"github.com/snowclaw/snowclaw/internal/eval/learneval"
	"github.com/snowclaw/snowclaw/internal/wsclient"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay"
)

// runEvalLearning is `snowclaw eval learning`: the scripted conversation
// of internal/eval/learneval replayed over websockets into a real relay with
// the agent learning, then each probe asked through NIP-50 by its reader.
// The model is the script's own (its scripted extractions, scriptedModel)
// unless --ollama-model names a real one.
func runEvalLearning(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval learning", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "conversation script (default: the built-in one, internal/eval/learneval/testdata/conversation.json)")
	model := fs.String("ollama-model", "", "run against this Ollama model instead of the scripted one, e.g. llama3.2")
	host := fs.String("ollama-host", "", "Ollama server for --ollama-model (default: [agent] ollama_host)")
	var fl serveFlags
	fs.StringVar(&fl.config, "config", "", "TOML config whose [search], [memory] and [agent] settings are used")
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	script, err := learneval.Load(*data)
	if err != nil {
		return err
	}
	cfg, ignored, err := resolveConfig(&fl, environ)
	if err != nil {
		return err
	}
	warnIgnoredEnv(stderr, ignored)
	var chat llm.Chatter = scriptedModel{script}
	name := "scripted (the script's extractions)"
	if *model != "" {
		h := *host
		if h == "" {
			h = cfg.Agent.OllamaHost
		}
		if chat, err = llm.NewOllama(llm.OllamaOptions{Host: h, Model: *model, Timeout: cfg.Agent.LLMTimeout.Duration}); err != nil {
			return err
		}
		name = chat.Name()
	}
	fmt.Fprintf(stdout, "learning: %d sessions, %d probes, model %s\n", len(script.Sessions), len(script.Probes), name)
	start := time.Now()
	results, stats, err := evalLearning(ctx, cfg, script, chat)
	if err != nil {
		return err
	}
	ok := 0
	for i, r := range results {
		mark := "FAIL"
		if r.OK {
			mark, ok = "ok", ok+1
		}
		want := "expect " + strings.Join(r.Probe.Expect, ", ")
		if len(r.Probe.Absent) > 0 {
			want = "must not find " + strings.Join(r.Probe.Absent, ", ")
		}
		what := fmt.Sprintf("%q", r.Probe.Query)
		if r.Probe.Conflicts {
			what = "conflict dashboard"
		}
		fmt.Fprintf(stdout, "%2d %-4s %-13s %s (%s)\n", i+1, mark, r.Probe.Who(), what, want)
		if !r.OK {
			for _, t := range r.Top {
				fmt.Fprintf(stdout, "         top: %s\n", t)
			}
		}
	}
	fmt.Fprintf(stdout, "score %d/%d (%.1f%%) in %s; model calls %d, tokens %d in / %d out, memories added %d, updated %d\n",
		ok, len(results), 100*float64(ok)/float64(len(results)), time.Since(start).Round(time.Millisecond),
		stats.Calls, stats.PromptTokens, stats.OutputTokens, stats.Added, stats.Updated)
	return nil
}

// scriptedModel is the script as the agent's model, answered in the
// process: the eval measures what learning keeps, not a model client (the
// Ollama client's wire is agent/llm's tests' business, against
// agent/llm/llmtest, which the binary does not link). Tokens are counted
// in words, as that fake server counts them.
type scriptedModel struct{ s *learneval.Script }

func (scriptedModel) Name() string { return "scripted" }

func (m scriptedModel) Chat(ctx context.Context, msgs []llm.Message) (string, error) {
	r, err := m.ChatJSON(ctx, msgs, nil)
	return r.Text, err
}

func (m scriptedModel) ChatJSON(_ context.Context, msgs []llm.Message, schema []byte) (llm.Reply, error) {
	if len(msgs) == 0 {
		return llm.Reply{}, errors.New("scripted model: no messages")
	}
	r := llm.Reply{Text: m.s.Answer(msgs[len(msgs)-1].Content, schema)}
	for _, msg := range msgs {
		r.PromptTokens += len(strings.Fields(msg.Content))
	}
	r.OutputTokens = len(strings.Fields(r.Text))
	return r, nil
}

// evalLearning starts a relay with the agent learning on a fresh data
// directory, replays the script and asks the probes.
func evalLearning(ctx context.Context, cfg Config, script *learneval.Script, chat llm.Chatter) ([]learneval.Result, learn.Stats, error) {
	var none learn.Stats
	dir, err := os.MkdirTemp("", "snowclaw-eval-learning-")
	if err != nil {
		return nil, none, err
	}
	defer os.RemoveAll(dir)
	owner := nostr.GeneratePrivateKey()
	ownerPK, _ := nostr.GetPublicKey(owner)
	cfg.Data, cfg.Owner = dir, ownerPK
	keys, err := relay.LoadKeys(dir, true)
	if err != nil {
		return nil, none, err
	}
	opts := nodeOptions(cfg, keys, newLogger(io.Discard, "error"))
	opts.EventRateIP, opts.EventRatePubkey, opts.FilterRateIP = policies.Rate{}, policies.Rate{}, policies.Rate{}
	// the conversations keep their dates, as a group's history copied
	// in from another relay does (NIP-29 late publication lifted)
	opts.AcceptMovedGroups = true
	opts.Search.Enabled = true
	opts.Agent = node.AgentOptions{Enabled: true, Options: agent.Options{
		Name: cfg.Agent.Name, LLM: chat,
		// it listens and learns; replies would only cost model calls here
		File: dynconfig.Patch{RespondMode: dynconfig.None, ContextHistory: 20},
		Learning: learn.Options{
			Enabled: true, Debounce: 100 * time.Millisecond, BatchSize: cfg.Agent.Learning.BatchSize,
			CallsPerHour: 1 << 20, ScopeItems: cfg.Agent.Learning.ScopeItems, Similar: cfg.Agent.Learning.Similar,
		},
	}}
	n, err := node.New(ctx, opts)
	if err != nil {
		return nil, none, err
	}
	defer n.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, none, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- n.Serve(sctx, ln) }()
	defer func() { stop(); <-served }()
	url := "ws://" + ln.Addr().String()

	people, err := joinPeople(ctx, url, owner, script)
	if err != nil {
		return nil, none, err
	}
	defer func() {
		for _, p := range people {
			p.c.Close()
		}
	}()
	agentPK := n.Agent().Pubkey()
	for i, se := range script.Sessions {
		for j, m := range se.Messages {
			p := people[m.From]
			at := nostr.Timestamp(se.Date.Unix() + int64(j*60))
			evt := nostr.Event{Kind: 9, CreatedAt: at, Tags: nostr.Tags{{"h", script.Group}}, Content: m.Text}
			if se.Where == "private" {
				evt, err = privmsg.WrapAt(ctx, p.sk, agentPK, m.Text, nil, at)
			} else {
				err = evt.Sign(p.sk)
			}
			if err == nil {
				err = p.c.Publish(ctx, evt)
			}
			if err != nil {
				return nil, none, fmt.Errorf("session %d message %d: %w", i+1, j+1, err)
			}
		}
		// each session is read before the next begins, as days apart
		if err := waitIdle(ctx, n.Agent()); err != nil {
			return nil, none, fmt.Errorf("session %d: %w", i+1, err)
		}
	}
	texts := map[string]string{}
	for _, it := range n.Agent().Items() {
		texts[it.ID] = it.Text
	}
	var out []learneval.Result
	for _, pr := range script.Probes {
		if pr.Record != "" {
			out = append(out, learneval.Judge(pr, recordLines(n.Agent(), people[pr.Record].sk, pr.In, script.Group)))
			continue
		}
		if pr.Conflicts {
			lines, err := conflictLines(ctx, n, people[pr.Reader].sk)
			if err != nil {
				return nil, none, err
			}
			out = append(out, learneval.Judge(pr, lines))
			continue
		}
		evs, closed, err := people[pr.Reader].c.Fetch(nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Search: pr.Query, Limit: 20}, 30*time.Second)
		if err != nil {
			return nil, none, err
		}
		if closed != "" {
			return nil, none, errors.New("search refused: " + closed)
		}
		var top []string
		for _, e := range evs {
			if !snowclaw.ReadEvent(e).IsMemoryItem() {
				continue
			}
			d := e.Tags.GetD()
			if t, ok := texts[d[strings.LastIndex(d, "/")+1:]]; ok && len(top) < 3 {
				top = append(top, t)
			}
		}
		out = append(out, learneval.Judge(pr, top))
	}
	return out, n.Agent().Stats().Learning, nil
}

// conflictLines is the reader's conflict dashboard (GET /api/v1/conflicts),
// a line per conflict with the texts of its memories.
func conflictLines(ctx context.Context, n *node.Node, sk string) ([]string, error) {
	pk, _ := nostr.GetPublicKey(sk)
	cs, err := n.Memory().Conflicts(ctx, pk, "")
	var out []string
	for _, c := range cs {
		var texts []string
		for _, m := range c.Memories {
			texts = append(texts, m.Text)
		}
		out = append(out, c.Topic+": "+strings.Join(texts, " | "))
	}
	return out, err
}

// recordLines is what a prompt answering the person shows of their
// record, in the group or in private, a line per note and preference.
func recordLines(a *agent.Agent, sk, in, group string) []string {
	pk, _ := nostr.GetPublicKey(sk)
	if in == "private" {
		group = ""
	}
	notes, prefs := a.PersonContext(pk, group)
	out := slices.Clone(notes)
	for k, v := range prefs {
		out = append(out, k+": "+v)
	}
	return out
}

type evalPerson struct {
	sk string
	c  *wsclient.Client
}

// joinPeople connects everyone (NIP-42), names them (kind 0) and has the
// owner make the group they join.
func joinPeople(ctx context.Context, url, owner string, script *learneval.Script) (map[string]evalPerson, error) {
	oc, err := wsclient.Dial(url)
	if err != nil {
		return nil, err
	}
	defer oc.Close()
	if err := oc.Auth(owner); err != nil {
		return nil, err
	}
	for _, e := range []nostr.Event{
		{Kind: 9007, Tags: nostr.Tags{{"h", script.Group}}},
		{Kind: 9002, Tags: nostr.Tags{{"h", script.Group}, {"name", script.Group}}},
	} {
		e.CreatedAt = nostr.Now()
		e.Sign(owner)
		if err := oc.Publish(ctx, e); err != nil {
			return nil, fmt.Errorf("making the group: %w", err)
		}
	}
	people := map[string]evalPerson{}
	for _, name := range script.People {
		p := evalPerson{sk: nostr.GeneratePrivateKey()}
		if p.c, err = wsclient.Dial(url); err != nil {
			return nil, err
		}
		people[name] = p
		if err := p.c.Auth(p.sk); err != nil {
			return nil, err
		}
		for _, e := range []nostr.Event{
			{Kind: 0, Content: fmt.Sprintf(`{"name":%q}`, name)},
			{Kind: 9021, Tags: nostr.Tags{{"h", script.Group}}},
		} {
			e.CreatedAt = nostr.Now()
			e.Sign(p.sk)
			if err := p.c.Publish(ctx, e); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return people, nil
}

// waitIdle waits until the agent has read everything fed to it, model
// calls included (a real model may take minutes).
func waitIdle(ctx context.Context, a *agent.Agent) error {
	deadline := time.Now().Add(15 * time.Minute)
	for !a.Idle() {
		if time.Now().After(deadline) {
			return errors.New("the agent did not finish learning in 15 minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
