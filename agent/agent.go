package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/learn"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/prompt"
	"github.com/snowclaw/snowclaw/policies"
)

// Options configure an agent. The relay fills in the functions.
type Options struct {
	Secret string // the agent's secret key, hex
	Owner  string // the owner's public key, hex; may be empty
	Name   string // how the agent is called in chat; default "Snowclaw"

	// Publish stores and broadcasts a signed event through the relay's
	// own write path (its rules apply to the agent too).
	Publish func(ctx context.Context, evt *nostr.Event) error
	// Query walks every stored event matching f (no visibility rule: the
	// agent reads its own store), until fn returns false.
	Query func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error
	// Recall finds stored memory events relevant to a message, best
	// first (the search index); the agent keeps those the reply's
	// audience may read. nil falls back to a lexical recall over the
	// agent's own items. A hit's Origin names a remote relay's result (a
	// layered recall); the prompt says where such a memory came from.
	Recall func(ctx context.Context, req RecallRequest) ([]snowclaw.SearchHit, error)
	// MayShow is the relay's read rule for quoting: whether evt (a
	// memory) may go into the prompt of reply, i.e. whether everyone who
	// may read reply may read evt (policies.Visibility.CanQuote). The
	// agent reads everything, so this is what keeps a reply from carrying
	// a memory to readers the relay would refuse it to. nil: the agent's
	// scope rule alone (tests without a relay).
	MayShow func(reply, evt *nostr.Event) bool

	// Commands handles a person's rights requests received in private
	// ("export my data", "forget …", "delete everything about me"):
	// it returns the answer and whether the message was such a command.
	Commands func(ctx context.Context, from, text string) (reply string, handled bool)

	LLM          llm.Chatter     // nil: keep memory and context, never reply
	File         dynconfig.Patch // respond mode and history from the config file
	Instructions string          // behavioural instructions for the system prompt
	TokenBudget  int             // prompt budget in tokens; 0 = 8192
	KnownKeys    []string        // hex pubkeys the sanitizer lets through

	QueueSize     int           // bounded input queue; 0 = 4096
	FlushEvery    int           // flush after this many dirty records; 0 = 20
	FlushInterval time.Duration // and at least this often; 0 = 30s
	MaxItems      int           // long-term memory cap; 0 = 500
	MaxLessons    int           // lesson cap; 0 = 200
	ReplyTimeout  time.Duration // one reply, model call included; 0 = 3m
	MaxReplies    int           // replies written side by side; 0 = 2

	// Learning is learning from conversation and consolidation; it
	// needs LLM to answer structured JSON (llm.Structured).
	Learning learn.Options
	// Profile is what the agent says of itself in its kind 0 and relay
	// list (docs/agent.md#the-agents-profile); published at Start when it changed.
	Profile ProfileOptions
	// Standby: the agent is one of several instances over a shared
	// store and runs only while it leads (standby.go): until Start,
	// and after Pause, it drops what it is fed.
	Standby bool
	// CatchUp is how far back Start looks for messages nobody answered
	// (a leader that died mid-reply, the time without one); 0 = no
	// catch-up, as for a single instance.
	CatchUp time.Duration

	Logger *slog.Logger
	Now    func() time.Time
}

// RecallRequest asks for memories to put in a prompt. Only memories the
// whole audience of the reply may read are wanted: in a group, public and
// that group's; in a private conversation, public and the person's own.
type RecallRequest struct {
	Query  string
	Group  string // "" in a private conversation
	Person string // hex pubkey of the sender
	Limit  int
	// Reply is the reply as the read rule sees it (no content): who may
	// read it is who the recall is for (Options.MayShow).
	Reply *nostr.Event
}

// Stats are the agent's counters (metrics, GET /api/v1/agent/stats).
type Stats struct {
	QueueDepth  int    `json:"queue_depth"` // events waiting in its input queue
	QueueCap    int    `json:"queue_cap"`
	Fed         uint64 `json:"fed"`     // events handed to it
	Dropped     uint64 `json:"dropped"` // events dropped on a full queue
	Handled     uint64 `json:"handled"`
	Replies     uint64 `json:"replies"`
	LLMErrors   uint64 `json:"llm_errors"`
	Flushed     uint64 `json:"flushed"` // records written to the relay
	FlushErrors uint64 `json:"flush_errors"`

	// Learning from conversation (zero when it is off).
	Learning learn.Stats `json:"learning"`
}

// Agent is the resident agent. Feed it events; it does the rest in its
// own goroutines.
type Agent struct {
	o      Options
	log    *slog.Logger
	sk, pk string
	npub   string
	codec  *memory.Codec
	mem    *memory.Store
	cfg    *dynconfig.Config
	keys   *policies.KeyFilter
	tok    prompt.Counter

	queue   chan *snowclaw.Event
	flushCh chan chan error
	kick    chan struct{}
	replyQ  chan replyJob // replies waiting for a writer

	mu      sync.Mutex
	flushMu sync.Mutex
	rings   map[string]*memory.Ring // group id, or "dm:<hex>"
	last    map[string]int64        // d tag → created_at last written
	ownDels map[string]bool         // d tags of the agent's own NIP-09 request being published

	fed, dropped, handled, replied, llmErr, flushed, flushErr atomic.Uint64

	replying atomic.Int64 // replies queued or being written (Idle)

	learning *learn.Learning        // what it learns; the agent is its host (learning.go)
	contexts map[string]ContextView // last prompt per conversation (LastContext)

	stop    chan struct{}
	run     context.Context // ends when the agent pauses: replies being written are dropped
	endRun  context.CancelFunc
	standby atomic.Bool
	backlog backlog // messages a new leader catches up on (standby.go)
	done    sync.WaitGroup
	replyWG sync.WaitGroup
	started atomic.Bool
	closed  atomic.Bool
}

// New checks the options and builds an agent; Start loads its memory.
func New(o Options) (*Agent, error) {
	if o.Publish == nil || o.Query == nil {
		return nil, errors.New("agent: Publish and Query are required")
	}
	pk, err := nostr.GetPublicKey(o.Secret)
	if err != nil {
		return nil, fmt.Errorf("agent key: %w", err)
	}
	codec, err := memory.NewCodec(o.Secret)
	if err != nil {
		return nil, err
	}
	setDefaults(&o)
	npub := snowclaw.NpubOf(pk)
	known := append([]string{pk}, o.KnownKeys...)
	if o.Owner != "" {
		known = append(known, o.Owner)
	}
	a := &Agent{
		o: o, log: o.Logger.With("component", "agent"),
		sk: o.Secret, pk: pk, npub: npub, codec: codec,
		mem:     memory.NewStore(memory.Options{MaxItems: o.MaxItems, MaxLessons: o.MaxLessons, Owner: o.Owner, Now: o.Now}),
		cfg:     dynconfig.New(o.File),
		keys:    policies.NewKeyFilter(known...),
		tok:     prompt.DefaultCounter(),
		queue:   make(chan *snowclaw.Event, o.QueueSize),
		flushCh: make(chan chan error),
		kick:    make(chan struct{}, 1),
		replyQ:  make(chan replyJob, 64),
		rings:   make(map[string]*memory.Ring),
		last:    make(map[string]int64),
		stop:    make(chan struct{}),

		contexts: make(map[string]ContextView),
	}
	a.learning, err = learn.New(o.Learning, learn.Env{
		Host: learnHost{a}, Mem: a.mem, Query: o.Query,
		Pubkey: pk, Owner: o.Owner, Name: o.Name, LLM: o.LLM,
		Sanitize: func(s string) string { return a.keys.Sanitize(s).Text }, Tokens: a.tok,
		MaxItems: o.MaxItems, ReplyTimeout: o.ReplyTimeout, Logger: a.log, Now: o.Now,
	})
	if err != nil {
		return nil, err
	}
	a.run, a.endRun = context.WithCancel(context.Background())
	a.standby.Store(o.Standby)
	return a, nil
}

func setDefaults(o *Options) {
	if o.Name == "" {
		o.Name = "Snowclaw"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	for _, d := range []struct {
		p *int
		v int
	}{{&o.QueueSize, 4096}, {&o.FlushEvery, 20}, {&o.MaxItems, 500}, {&o.MaxLessons, 200}, {&o.MaxReplies, 2}, {&o.TokenBudget, 8192}} {
		if *d.p <= 0 {
			*d.p = d.v
		}
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 30 * time.Second
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 3 * time.Minute
	}
}

// Pubkey is the agent's public key, hex.
func (a *Agent) Pubkey() string { return a.pk }

// Start loads the agent's records, the owner's config and the known
// names from the store, then starts the worker and the flusher. Events
// fed before Start wait in the queue.
func (a *Agent) Start(ctx context.Context) error {
	if a.closed.Load() || a.started.Load() {
		return errors.New("agent: already started or closed")
	}
	if err := a.load(ctx); err != nil {
		return err
	}
	if err := a.catchUp(ctx); err != nil {
		return err
	}
	a.standby.Store(false)
	a.started.Store(true)
	a.done.Add(2)
	go a.work()
	go a.flushLoop()
	// learning's background loops stop with the others: the leader gate
	// covers them
	a.learning.Run(a.stop, &a.done)
	a.publishProfile(ctx)
	for i := 0; i < a.o.MaxReplies; i++ {
		go a.replyWriter(a.replyQ)
	}
	return nil
}

// Feed offers an event to the agent without ever blocking the relay:
// when the queue is full the event is dropped, counted and logged. The
// agent's own events are not fed back to it.
func (a *Agent) Feed(evt *snowclaw.Event) bool {
	if evt == nil || evt.PubKey == a.pk || a.closed.Load() || a.standby.Load() {
		return false
	}
	select {
	case a.queue <- evt:
		a.fed.Add(1)
		return true
	default:
		if n := a.dropped.Add(1); n == 1 || n%100 == 0 {
			a.log.Warn("agent queue full: event dropped", "id", evt.ID, "kind", evt.Kind, "dropped_total", n, "queue", cap(a.queue))
		}
		return false
	}
}

// Stats returns the counters.
func (a *Agent) Stats() Stats {
	return Stats{
		QueueDepth: len(a.queue), QueueCap: cap(a.queue),
		Fed: a.fed.Load(), Dropped: a.dropped.Load(), Handled: a.handled.Load(),
		Replies: a.replied.Load(), LLMErrors: a.llmErr.Load(),
		Flushed: a.flushed.Load(), FlushErrors: a.flushErr.Load(),
		Learning: a.learning.Stats(),
	}
}

// Close stops taking events, handles what is queued, waits for replies
// being written and flushes every dirty record (docs/design.md "The agent": always on
// shutdown).
func (a *Agent) Close(ctx context.Context) error {
	if !a.closed.CompareAndSwap(false, true) {
		return nil
	}
	a.learning.Close()
	if a.standby.Load() {
		return nil // it never led, or Pause has flushed what it knew
	}
	if a.started.Load() {
		close(a.stop)
		a.done.Wait()
	}
	a.replyWG.Wait()
	close(a.replyQ)
	return a.flush(ctx)
}

// work handles queued events one at a time, so RAM state changes in the
// order the relay stored them.
func (a *Agent) work() {
	defer a.done.Done()
	a.handleBacklog()
	for {
		select {
		case evt := <-a.queue:
			if !a.backlog.had(evt.ID) {
				a.handle(evt)
			} else {
				a.handled.Add(1)
			}
		case <-a.stop:
			for {
				select {
				case evt := <-a.queue:
					a.handle(evt)
				default:
					return
				}
			}
		}
	}
}

// Idle reports whether every event fed so far has been handled and every
// reply it queued has been answered or has failed. It is the barrier tests
// wait on before asserting that no (further) reply was made: counting only
// handled events let a model call still queued for a writer slip past it.
func (a *Agent) Idle() bool {
	// replying is raised before handled (reply runs inside handle), so
	// once every fed event is handled it counts every queued reply
	return a.fed.Load() == a.handled.Load() && a.replying.Load() == 0 && a.learning.Idle()
}
