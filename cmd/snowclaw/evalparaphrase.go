package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/internal/progress"
	"github.com/snowclaw/snowclaw/search/paraphrase"
)

// runEvalParaphrase is `snowclaw eval paraphrase`: search by meaning
// measured through a real relay. Every pair's memory of search/paraphrase
// (written so that it shares no word with its query) and --distractors
// unrelated memories are published as public kind 30078 memory items by
// one author, in an order and at dates drawn from --seed, and each query
// is a NIP-50 REQ with limit 10. It prints recall@1 and recall@10 (the
// share of queries whose memory is in the first 1 or 10) for BM25 alone
// and for the full ranking of the configuration, as eval locomo does.
func runEvalParaphrase(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval paraphrase", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var fl serveFlags
	fs.StringVar(&fl.config, "config", "", "TOML config whose [search] and [memory] settings are evaluated")
	distractors := fs.Int("distractors", 5000, "unrelated memories the pairs' memories hide among")
	seed := fs.String("seed", defaultEvalSeed, "seed of every key, of the distractors, their order and their dates")
	split := fs.String("split", "all", "queries asked: all, tune (even-numbered pairs) or holdout (odd-numbered); every pair's memory is published")
	if err := fs.Parse(args); err != nil {
		return usageFailed(err)
	}
	if *distractors < 0 {
		return fmt.Errorf("eval paraphrase: --distractors %d", *distractors)
	}
	cfg, ignored, err := resolveConfig(&fl, environ)
	if err != nil {
		return err
	}
	warnIgnoredEnv(stderr, ignored)
	pairs := paraphrase.Pairs()
	asked, err := splitPairs(len(pairs), *split)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "paraphrase: %d queries (%s) of %d pairs among %d unrelated memories, embedder %s\n\n", len(asked), *split, len(pairs), *distractors, cfg.Search.Embedder)
	for _, mode := range []struct {
		title string
		bm25  bool
	}{{"BM25 alone", true}, {"full ranking", false}} {
		start := time.Now()
		bar := progress.New(stderr, "eval paraphrase, "+mode.title, "queries")
		res, err := evalParaphraseOnRelay(ctx, cfg, evalKeys(*seed), mode.bm25, pairs, asked, *distractors, func(done int) { bar.Update(done, len(asked)) })
		bar.Finish()
		if err != nil {
			return fmt.Errorf("%s: %w", mode.title, err)
		}
		n := float64(len(asked))
		fmt.Fprintf(stdout, "%s (%s)\n  recall@1 %5.1f  recall@10 %5.1f  (%d of %d in the first 10)\n", mode.title, time.Since(start).Round(time.Second),
			100*float64(res.at1)/n, 100*float64(res.at10)/n, res.at10, len(asked))
		fmt.Fprintf(stdout, "  queries answered with nothing: %d of %d\n", res.empty, len(asked))
		fmt.Fprintf(stdout, "  unrelated queries answered with nothing: %d of %d\n\n", res.emptyProbes, res.probes)
	}
	return nil
}

type paraphraseResult struct {
	at1, at10, empty    int
	probes, emptyProbes int
}

// splitPairs is the pairs whose queries are asked: all, the even-numbered
// (tune) or the odd-numbered (holdout), counting from 0.
func splitPairs(n int, split string) ([]int, error) {
	if split != "all" && split != "tune" && split != "holdout" {
		return nil, fmt.Errorf("eval paraphrase: --split %q: want all, tune or holdout", split)
	}
	var out []int
	for i := range n {
		if split == "all" || (i%2 == 0) == (split == "tune") {
			out = append(out, i)
		}
	}
	return out, nil
}

func evalParaphraseOnRelay(ctx context.Context, cfg Config, keyOf evalKeys, bm25Only bool, pairs []paraphrase.Pair, asked []int, distractors int, answered func(int)) (*paraphraseResult, error) {
	r, err := startEvalRelay(ctx, cfg, keyOf, bm25Only)
	if err != nil {
		return nil, err
	}
	defer r.close()
	author := keyOf.secret("author paraphrase")
	pk, _ := nostr.GetPublicKey(author)
	h := nostr.Event{Content: string(keyOf)}
	seed := uint64(0)
	for _, c := range h.GetID()[:16] {
		seed = seed<<4 | uint64(c%16)
	}
	texts := paraphrase.Distractors(distractors, seed)
	for _, p := range pairs {
		texts = append(texts, p.Memory)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	order := rng.Perm(len(texts))
	idOf := make(map[string]string, len(pairs))              // memory text → event id
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix() // then one every 10 minutes: 50,000 reach 2024-12
	for i, k := range order {
		summary, _ := json.Marshal(map[string]string{"summary": texts[k]})
		evt := nostr.Event{Kind: snowclaw.KindAppData, CreatedAt: nostr.Timestamp(at + int64(i)*600),
			Tags: nostr.Tags{{"d", fmt.Sprintf("snow:memory:p%x", i)}}, Content: string(summary)}
		evt.Sign(author)
		if err := r.client.Publish(ctx, evt); err != nil {
			return nil, fmt.Errorf("memory %d: %w", i, err)
		}
		if k >= distractors {
			idOf[texts[k]] = evt.ID
		}
	}
	ask := func(text string) ([]string, error) {
		f := nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: []string{pk}, Search: text, Limit: 10}
		evs, closed, err := r.client.Fetch(f, 30*time.Second)
		if err != nil {
			return nil, err
		}
		if closed != "" {
			return nil, errors.New("search refused: " + closed)
		}
		ids := make([]string, len(evs))
		for i, e := range evs {
			ids[i] = e.ID
		}
		return ids, nil
	}
	res := &paraphraseResult{}
	for i, k := range asked {
		p := pairs[k]
		ids, err := ask(p.Query)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			res.empty++
		}
		for rank, id := range ids {
			if id == idOf[p.Memory] {
				res.at10++
				if rank == 0 {
					res.at1++
				}
			}
		}
		answered(i + 1)
	}
	for _, probe := range unrelatedProbes {
		ids, err := ask(probe)
		if err != nil {
			return nil, err
		}
		res.probes++
		if len(ids) == 0 {
			res.emptyProbes++
		}
	}
	return res, nil
}
