package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEval_LocomoOverRelay runs `snowclaw eval locomo` on a two-conversation
// file where each question's words point at one turn, so both modes must
// find every gold turn, and the second conversation's turn (same words)
// must never rank above it in the first one's answers (NDCG 100).
func TestEval_LocomoOverRelay(t *testing.T) {
	conv := func(id, pet string) map[string]any {
		return map[string]any{
			"sample_id": id,
			"conversation": map[string]any{
				"speaker_a": "Ann", "speaker_b": "Bo",
				"session_1_date_time": "1:56 pm on 8 May, 2023",
				"session_1": []map[string]string{
					{"speaker": "Ann", "dia_id": "D1:1", "text": "hi there, how was your weekend?"},
					{"speaker": "Bo", "dia_id": "D1:2", "text": "I adopted a " + pet + " from the shelter on Saturday"},
					{"speaker": "Ann", "dia_id": "D1:3", "text": "I went hiking in the mountains with my sister"},
				},
			},
			"qa": []map[string]any{
				{"question": "What did Bo adopt from the shelter?", "answer": pet, "evidence": []string{"D1:2"}, "category": 4},
				{"question": "Where did Ann go hiking?", "answer": "mountains", "evidence": []string{"D1:3"}, "category": 1},
			},
		}
	}
	b, _ := json.Marshal([]any{conv("c1", "cat"), conv("c2", "dog")})
	path := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"eval", "locomo", "--data", path, "--as", "both"}, nil, &out, &errOut); err != nil {
		t.Fatalf("eval: %v\n%s", err, errOut.String())
	}
	text := out.String()
	for _, path := range []string{"chat", "memories"} {
		for _, mode := range []string{"BM25 alone", "full ranking"} {
			if !strings.Contains(text, path+", "+mode) {
				t.Fatalf("no %q section:\n%s", path+", "+mode, text)
			}
		}
	}
	// memories: one author per conversation keeps the other one's turn
	// (same words) out, as the group does for chat
	overall := regexp.MustCompile(`overall\s+n=4\s+recall@5\s+100\.0\s+recall@10\s+100\.0\s+NDCG@10\s+100\.0`)
	if n := len(overall.FindAllString(text, -1)); n != 4 {
		t.Fatalf("want recall 100 on all 4 questions in both modes of both paths:\n%s", text)
	}
	if n := strings.Count(text, "unrelated queries answered with nothing: 8 of 8"); n != 4 {
		t.Fatalf("want every unrelated query answered with nothing on every run:\n%s", text)
	}
	for _, bad := range [][]string{{"--as", "notes"}, {"--split", "half"}} {
		err := run(context.Background(), append([]string{"eval", "locomo", "--data", path}, bad...), nil, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), bad[1]) {
			t.Fatalf("%q: err = %v, want a refusal naming it", bad, err)
		}
	}
	if !strings.Contains(text, "multi-hop") || !strings.Contains(text, "single-hop") {
		t.Fatalf("no per-category lines:\n%s", text)
	}
	// progress on stderr, plain lines when it is not a terminal
	if !strings.Contains(errOut.String(), "eval chat, BM25 alone: 4/4 questions (100%)") || strings.Contains(errOut.String(), "\r") {
		t.Fatalf("eval progress on stderr:\n%q", errOut.String())
	}
}

// TestEval_DataRequired: the data set is not in the repository, so eval
// names no default path; without --data it says what it needs and fails.
func TestEval_DataRequired(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"eval", "locomo"}, {"eval", "locomo", "--data", ""}} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, nil, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "--data FILE is required") {
			t.Fatalf("%q: err = %v, want the missing --data refusal", args, err)
		}
		if out.Len() != 0 {
			t.Fatalf("%q: ran anyway:\n%s", args, out.String())
		}
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"eval", "locomo", "--data", "no-such.json"}, nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "no-such.json") {
		t.Fatalf("a missing file: err = %v, want one naming it", err)
	}
}

// TestEval_Learning runs `snowclaw eval learning` on the built-in script
// with its scripted model: every probe must be answered (the learnt
// memory in the top 3 of its reader's NIP-50 search, or in the person
// record a prompt of the right scope shows, or in its reader's conflict
// dashboard) and no private memory or superseded fact may surface.
func TestEval_Learning(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"eval", "learning"}, nil, &out, &errOut); err != nil {
		t.Fatalf("eval learning: %v\n%s", err, errOut.String())
	}
	if !regexp.MustCompile(`score 23/23 \(100\.0%\)`).MatchString(out.String()) {
		t.Fatalf("want every probe answered:\n%s", out.String())
	}
	if !regexp.MustCompile(`updated 2\b`).MatchString(out.String()) {
		t.Fatalf("the move to Berlin and the offsite's move were not filed as new versions:\n%s", out.String())
	}
}

// TestEval_SameSeedSameNumbers: the turns of one session share a word and
// a length, so BM25 ties them and event ids (hence keys) order them. Run
// twice with one --seed, eval prints the same numbers; with another seed
// the BM25 section differs, which shows the ties are real and the keys,
// not luck, make the runs agree. Fresh keys per run made them differ.
func TestEval_SameSeedSameNumbers(t *testing.T) {
	var turns []map[string]string
	var qa []map[string]any
	for i := range 40 {
		id := fmt.Sprintf("D1:%d", i+1)
		turns = append(turns, map[string]string{"speaker": "Ann", "dia_id": id, "text": fmt.Sprintf("the garden word%c%c", 'a'+i/26, 'a'+i%26)})
		if i%2 == 0 {
			qa = append(qa, map[string]any{"question": fmt.Sprintf("How is the garden? %d", i), "answer": "fine", "evidence": []string{id}, "category": 1})
		}
	}
	b, _ := json.Marshal([]any{map[string]any{"sample_id": "c1", "qa": qa, "conversation": map[string]any{
		"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns}}})
	path := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	timing := regexp.MustCompile(`\(\d+s\)`)
	eval := func(seed string) string {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{"eval", "locomo", "--data", path, "--as", "memories", "--seed", seed}, nil, &out, &errOut); err != nil {
			t.Fatalf("eval: %v\n%s", err, errOut.String())
		}
		return timing.ReplaceAllString(out.String(), "")
	}
	first, second := eval("one"), eval("one")
	if first != second {
		t.Fatalf("one seed, two results:\n%s\n---\n%s", first, second)
	}
	bm25 := func(s string) string { return s[:strings.Index(s, "full ranking")] }
	if other := eval("two"); bm25(other) == bm25(first) {
		t.Fatalf("another seed, the same BM25 ranking: the fixture has no ties to break\n%s", first)
	}
}
