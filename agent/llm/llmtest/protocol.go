package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// The shapes below are those of Ollama's server (server/routes.go): a
// non-streaming chat is one JSON object with done:true; a streaming chat
// is NDJSON, one object per token group with done:false, then an object
// with empty content, done:true, done_reason and the metrics. Errors are
// {"error": "…"} with the status.

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// chatResponse is one object of a chat answer; the final one carries
// made-up but plausible metrics so that clients reading them see numbers.
// The token counts are words, a stand-in for a tokenizer that lets a
// client's cost accounting be checked.
func chatResponse(model, content string, done bool, u usage) api.ChatResponse {
	r := api.ChatResponse{
		Model:     model,
		CreatedAt: time.Now().UTC(),
		Message:   api.Message{Role: "assistant", Content: content},
		Done:      done,
	}
	if done {
		r.DoneReason = "stop"
		r.Metrics = api.Metrics{
			TotalDuration:      time.Millisecond,
			LoadDuration:       100 * time.Microsecond,
			PromptEvalCount:    u.prompt,
			PromptEvalDuration: 100 * time.Microsecond,
			EvalCount:          u.output,
			EvalDuration:       500 * time.Microsecond,
		}
	}
	return r
}

// writeStream sends text a word at a time, as a model generates it, so
// that a client which keeps only the last chunk is caught.
func writeStream(w http.ResponseWriter, model, text string, u usage) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w) // Encode ends each object with "\n"
	if text != "" {
		for _, piece := range strings.SplitAfter(text, " ") {
			if piece == "" {
				continue
			}
			if enc.Encode(chatResponse(model, piece, false, u)) != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
	_ = enc.Encode(chatResponse(model, "", true, u))
}

// usage is what a final object reports as prompt_eval_count and eval_count.
type usage struct{ prompt, output int }

// usageOf counts words of the request's messages and of the answer.
func usageOf(req api.ChatRequest, answer string) usage {
	u := usage{output: len(strings.Fields(answer))}
	for _, m := range req.Messages {
		u.prompt += len(strings.Fields(m.Content))
	}
	return u
}
