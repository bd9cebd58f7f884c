package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/time/rate"

	"github.com/snowclaw/snowclaw/agent/llm"
)

// Errors of a Learner's calls, for errors.Is.
var (
	// ErrBudget: the hourly call budget is spent; nothing was sent.
	ErrBudget = errors.New("learning: the hourly model call budget is spent")
	// ErrInvalid: the model broke the schema twice; the answer was dropped.
	ErrInvalid = errors.New("learning: the model's answer broke the schema twice and was dropped")
)

// Options configure a Learner.
type Options struct {
	Model        llm.Structured
	CallsPerHour int                 // model calls allowed per hour; <= 0 means 60
	Sanitize     func(string) string // run over every text sent; nil: none
	Logger       *slog.Logger
	Now          func() time.Time
}

// Stats are what learning has cost so far.
type Stats struct {
	Calls         uint64 `json:"calls"`
	PromptTokens  uint64 `json:"prompt_tokens"`
	OutputTokens  uint64 `json:"output_tokens"`
	Errors        uint64 `json:"errors"`         // failed calls, broken answers included
	Invalid       uint64 `json:"invalid"`        // answers that broke the schema
	SkippedBudget uint64 `json:"skipped_budget"` // calls not made for the budget
	CallsPerHour  int    `json:"calls_per_hour"`
}

// Learner makes the model calls of learning. It is safe for concurrent
// use.
type Learner struct {
	o     Options
	log   *slog.Logger
	limit *rate.Limiter

	calls, prompt, output, errs, invalid, skipped atomic.Uint64
}

// New returns a Learner over o.Model.
func New(o Options) (*Learner, error) {
	if o.Model == nil {
		return nil, errors.New("learning: no model")
	}
	if o.CallsPerHour <= 0 {
		o.CallsPerHour = 60
	}
	if o.Sanitize == nil {
		o.Sanitize = func(s string) string { return s }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	// a token bucket holding an hour's calls, refilled evenly: at most
	// CallsPerHour in any hour, and a busy hour does not borrow from the next
	lim := rate.NewLimiter(rate.Limit(float64(o.CallsPerHour)/3600), o.CallsPerHour)
	return &Learner{o: o, log: o.Logger.With("component", "learning"), limit: lim}, nil
}

// Stats returns the counters.
func (l *Learner) Stats() Stats {
	return Stats{
		Calls: l.calls.Load(), PromptTokens: l.prompt.Load(), OutputTokens: l.output.Load(),
		Errors: l.errs.Load(), Invalid: l.invalid.Load(), SkippedBudget: l.skipped.Load(),
		CallsPerHour: l.o.CallsPerHour,
	}
}

// schema is a JSON schema: the bytes sent as `format` and the validator
// the answer must pass, compiled once on first use.
type schema struct {
	raw      json.RawMessage
	resolved func() (*jsonschema.Resolved, error)
}

func newSchema(raw string) schema {
	return schema{raw: json.RawMessage(raw), resolved: sync.OnceValues(func() (*jsonschema.Resolved, error) {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return nil, fmt.Errorf("learning: built-in schema: %w", err)
		}
		return s.Resolve(nil)
	})}
}

// call asks the model for JSON under sc and decodes it into out. A broken
// answer (not JSON, or not the schema) is retried once, then dropped with
// a log line; each attempt is a call under the budget.
func (l *Learner) call(ctx context.Context, what, system, user string, sc schema, out any) error {
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: system},
		{Role: llm.RoleUser, Content: l.o.Sanitize(user)},
	}
	for attempt := 1; ; attempt++ {
		if !l.limit.AllowN(l.o.Now(), 1) {
			l.skipped.Add(1)
			l.log.Info("model call skipped: hourly budget spent", "what", what, "calls_per_hour", l.o.CallsPerHour)
			return ErrBudget
		}
		l.calls.Add(1)
		r, err := l.o.Model.ChatJSON(ctx, msgs, sc.raw)
		l.prompt.Add(uint64(max(r.PromptTokens, 0)))
		l.output.Add(uint64(max(r.OutputTokens, 0)))
		if err != nil {
			l.errs.Add(1)
			return fmt.Errorf("learning: %s: %w", what, err)
		}
		err = decode(sc, r.Text, out)
		if err == nil {
			return nil
		}
		l.errs.Add(1)
		l.invalid.Add(1)
		if attempt >= 2 {
			// the answer is not logged: it may quote the conversation
			l.log.Warn("model answer broke the schema again: dropped", "what", what, "reason", err)
			return fmt.Errorf("%w: %s: %v", ErrInvalid, what, err)
		}
		l.log.Info("model answer broke the schema: asking once more", "what", what, "reason", err)
	}
}

// decode checks text against the schema, then unmarshals it.
func decode(sc schema, text string, out any) error {
	rs, err := sc.resolved()
	if err != nil {
		return err
	}
	var inst any
	if err := json.Unmarshal([]byte(text), &inst); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := rs.Validate(inst); err != nil {
		return err
	}
	return json.Unmarshal([]byte(text), out)
}
