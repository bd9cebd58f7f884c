package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/eval/locomo"
	"github.com/snowclaw/snowclaw/internal/progress"
	"github.com/snowclaw/snowclaw/internal/wsclient"
)

// runEval is `snowclaw eval locomo --data FILE`: LoCoMo's retrieval
// metric (recall@5/10 and NDCG@10 of the evidence turns) measured against a
// real relay. Every dialogue
// turn is published over websocket as a group chat message (one NIP-29
// group per conversation, so a query only sees its own conversation) and
// every question is a NIP-50 REQ. With --as memories every turn is instead
// a public kind 30078 memory item ({"summary": "<speaker>: <text>"},
// created_at the session date plus the turn's position in seconds, no chat neighbours; one author per
// conversation, so a query only sees its own), the path an agent's
// memories take. Each path runs twice: BM25 alone, then the full ranking
// of the configuration. --split tune|holdout keeps the even- or the
// odd-numbered conversations, so what is tuned on one half can be
// confirmed on the other. Every key (the owner's, the relay's, the
// agent's, each conversation's author) comes from --seed, so the event ids
// that break ranking ties are the same on every run: the same command
// gives the same numbers.
func runEval(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stderr, evalUsage)
		return errUsageShown
	case isHelp(args[0]):
		fmt.Fprint(stdout, evalUsage)
		return flag.ErrHelp
	case args[0] == "learning":
		return runEvalLearning(ctx, args[1:], environ, stdout, stderr)
	case args[0] == "paraphrase":
		return runEvalParaphrase(ctx, args[1:], environ, stdout, stderr)
	case args[0] != "locomo":
		return fmt.Errorf("eval: unknown benchmark %q\n\n%s", args[0], evalUsage)
	}
	fs := flag.NewFlagSet("eval locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// no default: the data set is not part of the repository, and a path
	// guessed outside it would fail with a confusing "no such file"
	data := fs.String("data", "", "LoCoMo JSON file (required)")
	var fl serveFlags
	fs.StringVar(&fl.config, "config", "", "TOML config whose [search] and [memory] settings are evaluated")
	as := fs.String("as", "chat", "how the turns are published: chat (kind 9 in a group), memories (kind 30078 items) or both")
	split := fs.String("split", "all", "conversations evaluated: all, tune (even-numbered) or holdout (odd-numbered)")
	seed := fs.String("seed", defaultEvalSeed, "seed of every key the run signs with (the same seed gives the same event ids, hence the same numbers)")
	if err := fs.Parse(args[1:]); err != nil {
		return usageFailed(err)
	}
	if *data == "" {
		fs.Usage()
		return fmt.Errorf("eval locomo: --data FILE is required (a LoCoMo JSON file, e.g. locomo10.json from the LoCoMo release)")
	}
	paths, err := evalPaths(*as)
	if err != nil {
		return err
	}
	convs, err := locomo.Load(*data)
	if err != nil {
		return err
	}
	if convs, err = splitConversations(convs, *split); err != nil {
		return err
	}
	cfg, ignored, err := resolveConfig(&fl, environ)
	if err != nil {
		return err
	}
	warnIgnoredEnv(stderr, ignored)
	questions := 0
	for _, c := range convs {
		questions += len(c.Questions)
	}
	fmt.Fprintf(stdout, "LoCoMo: %d conversations (%s), %d questions, embedder %s\n\n", len(convs), *split, questions, cfg.Search.Embedder)
	for _, path := range paths {
		for _, mode := range []struct {
			title string
			bm25  bool
		}{{"BM25 alone", true}, {"full ranking", false}} {
			start := time.Now()
			bar := progress.New(stderr, fmt.Sprintf("eval %s, %s", path, mode.title), "questions")
			res, err := evalOnRelay(ctx, cfg, convs, evalKeys(*seed), mode.bm25, path, func(done int) { bar.Update(done, questions) })
			bar.Finish()
			if err != nil {
				return fmt.Errorf("%s, %s: %w", path, mode.title, err)
			}
			res.scores.Write(stdout, fmt.Sprintf("%s, %s (%s)", path, mode.title, time.Since(start).Round(time.Second)))
			fmt.Fprintf(stdout, "  unrelated queries answered with nothing: %d of %d\n\n", res.emptyProbes, res.probes)
		}
	}
	return nil
}

// evalCommands are the benchmarks of eval.
var evalCommands = []subcommand{
	{"locomo", "--data FILE [--as chat|memories|both] [--split all|tune|holdout]", "LoCoMo's retrieval metric (recall@5/10, NDCG@10)"},
	{"learning", "[--data FILE] [--ollama-model M]", "learning from conversation: a scripted conversation, then its probes"},
	{"paraphrase", "[--distractors N] [--split all|tune|holdout]", "search by meaning: queries that share no word with their memory (recall@1/10)"},
}

var evalUsage = subUsage("usage: snowclaw eval <benchmark> [flags]\n", evalCommands, "snowclaw eval <benchmark> --help lists its flags.\n")

// The publishing paths of eval locomo.
const (
	asChat     = "chat"
	asMemories = "memories"
)

func evalPaths(as string) ([]string, error) {
	switch as {
	case asChat, asMemories:
		return []string{as}, nil
	case "both":
		return []string{asChat, asMemories}, nil
	}
	return nil, fmt.Errorf("eval locomo: --as %q: want chat, memories or both", as)
}

// splitConversations keeps all conversations, the even-numbered ones
// (tune) or the odd-numbered ones (holdout), counting from 0.
func splitConversations(convs []locomo.Conversation, split string) ([]locomo.Conversation, error) {
	if split == "all" {
		return convs, nil
	}
	if split != "tune" && split != "holdout" {
		return nil, fmt.Errorf("eval locomo: --split %q: want all, tune or holdout", split)
	}
	var out []locomo.Conversation
	for i, c := range convs {
		if (i%2 == 0) == (split == "tune") {
			out = append(out, c)
		}
	}
	return out, nil
}

// unrelatedProbes share no word with any LoCoMo conversation: the relevance
// floor must answer each with nothing.
var unrelatedProbes = []string{"zzzqqq", "xylophone quasar flux", "kubernetes pod eviction", "photosynthesis chlorophyll enzyme"}

// evalResult is one run's scores and how many unrelated probes came back
// empty.
type evalResult struct {
	scores              *locomo.Scores
	probes, emptyProbes int
}

// evalOnRelay starts a relay on a fresh data directory and a random
// loopback port, publishes the conversations and scores the questions.
// answered, when not nil, hears how many questions have been scored.
func evalOnRelay(ctx context.Context, cfg Config, convs []locomo.Conversation, keyOf evalKeys, bm25Only bool, path string, answered func(int)) (*evalResult, error) {
	r, err := startEvalRelay(ctx, cfg, keyOf, bm25Only)
	if err != nil {
		return nil, err
	}
	defer r.close()
	c, owner := r.client, r.owner
	res := &evalResult{scores: &locomo.Scores{}}
	done := 0
	for _, conv := range convs {
		var docOf map[string]string
		var scope nostr.Filter // what keeps a query inside its conversation
		if path == asMemories {
			author := keyOf.secret("author " + conv.SampleID)
			pk, _ := nostr.GetPublicKey(author)
			docOf, err = publishMemories(ctx, c, author, conv)
			scope = nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{pk}}
		} else {
			docOf, err = publishConversation(ctx, c, owner, conv)
			scope = nostr.Filter{Tags: nostr.TagMap{"h": {conv.SampleID}}}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", conv.SampleID, err)
		}
		ask := func(text string) ([]string, error) {
			f := scope
			f.Search, f.Limit = text, 10
			evs, closed, err := c.Fetch(f, 30*time.Second)
			if err != nil {
				return nil, err
			}
			if closed != "" {
				return nil, errors.New("search refused: " + closed)
			}
			ranked := make([]string, 0, len(evs))
			for _, e := range evs {
				ranked = append(ranked, docOf[e.ID])
			}
			return ranked, nil
		}
		for _, q := range conv.Questions {
			ranked, err := ask(q.Text)
			if err != nil {
				return nil, err
			}
			res.scores.Add(q.Category, ranked, q.Gold)
			if answered != nil {
				done++
				answered(done)
			}
		}
		for _, probe := range unrelatedProbes {
			ranked, err := ask(probe)
			if err != nil {
				return nil, err
			}
			res.probes++
			if len(ranked) == 0 {
				res.emptyProbes++
			}
		}
	}
	return res, nil
}

// publishMemories publishes each turn as a public memory item by author,
// dated as in the data; it returns event id → turn id. The d tag is one
// opaque token, so the topic adds no word a question could match.
func publishMemories(ctx context.Context, c *wsclient.Client, author string, conv locomo.Conversation) (map[string]string, error) {
	// created_at is the session's date plus the turn's position in
	// seconds: the turns of a session are stored close together, none at
	// the same second (search/session groups them by time, not by equal
	// timestamps)
	docOf := make(map[string]string, len(conv.Turns))
	for i, t := range conv.Turns {
		summary, _ := json.Marshal(map[string]string{"summary": t.Speaker + ": " + t.Text})
		evt := nostr.Event{Kind: snowclaw.KindAppData, CreatedAt: nostr.Timestamp(t.At),
			Tags: nostr.Tags{{"d", fmt.Sprintf("snow:memory:t%x", i)}}, Content: string(summary)}
		evt.Sign(author)
		if err := c.Publish(ctx, evt); err != nil {
			return nil, fmt.Errorf("turn %s: %w", t.DiaID, err)
		}
		docOf[evt.ID] = locomo.DocID(conv.SampleID, t.DiaID)
	}
	return docOf, nil
}

// publishConversation makes the conversation's group and publishes its
// turns in order, dated as in the data; it returns event id → turn id.
func publishConversation(ctx context.Context, c *wsclient.Client, sk string, conv locomo.Conversation) (map[string]string, error) {
	// now, as the relay accepts no older moderation event; its id ranks nothing
	create := nostr.Event{Kind: 9007, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", conv.SampleID}}}
	create.Sign(sk)
	if err := c.Publish(ctx, create); err != nil {
		return nil, fmt.Errorf("creating group: %w", err)
	}
	docOf := make(map[string]string, len(conv.Turns))
	for _, t := range conv.Turns {
		evt := nostr.Event{Kind: 9, CreatedAt: nostr.Timestamp(t.At), Tags: nostr.Tags{{"h", conv.SampleID}}, Content: t.Speaker + ": " + t.Text}
		evt.Sign(sk)
		if err := c.Publish(ctx, evt); err != nil {
			return nil, fmt.Errorf("turn %s: %w", t.DiaID, err)
		}
		docOf[evt.ID] = locomo.DocID(conv.SampleID, t.DiaID)
	}
	return docOf, nil
}
