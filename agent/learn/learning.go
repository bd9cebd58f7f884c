package learn

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw/agent/extract"
	"github.com/snowclaw/snowclaw/agent/llm"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
	"github.com/snowclaw/snowclaw/agent/prompt"
)

// Host is what learning needs of the agent that runs it. The agent owns
// the records' persistence, the conversation buffers, recall and the
// rule of what a reply may quote; learning decides what to remember and
// leaves the rest to the host.
type Host interface {
	// Dirtied tells the host that records changed: it writes them in
	// its own time.
	Dirtied()
	// Flush writes every changed record now.
	Flush(ctx context.Context) error
	// CurrentEvent is the id of the stored event of an item's current
	// version.
	CurrentEvent(ctx context.Context, it memory.Item) (string, error)
	// Supersede writes next as the new version of the item oldID, whose
	// current event is oldEvent, and returns it with its event: the one
	// path of every new version of a memory.
	Supersede(ctx context.Context, oldID, oldEvent string, next memory.Item) (memory.Item, *nostr.Event, error)
	// Recall finds up to n memories relevant to query that a reply in c
	// may quote, best first (through the search index when the relay
	// has one).
	Recall(ctx context.Context, c Conversation, query string, n int) []Recalled
	// InScope reports whether it belongs in c, whoever reads c: public,
	// c's group's, or in private c's person's own.
	InScope(it memory.Item, c Conversation) bool
	// MayRead is InScope, and the relay's read rule lets everyone who
	// reads a reply in c read it.
	MayRead(it memory.Item, c Conversation) bool
	// OpenPrivate opens a private message (a NIP-17 gift wrap) addressed
	// to the agent.
	OpenPrivate(ctx context.Context, wrap *nostr.Event) (privmsg.Message, error)
	// TrimHistory drops from each conversation buffer the messages
	// written before before(group, person), in unix seconds; group is ""
	// for the private conversation with person.
	TrimHistory(before func(group, person string) int64)
}

// Env is what learning works with besides its host: the agent's records
// in RAM, its store, its identity and its settings.
type Env struct {
	Host Host
	Mem  *memory.Store
	// Query walks every stored event matching f, as the agent reads its
	// store (no visibility rule), until fn returns false.
	Query    func(ctx context.Context, f nostr.Filter, fn func(*nostr.Event) bool) error
	Pubkey   string              // the agent's, hex
	Owner    string              // the owner's, hex; may be empty
	Name     string              // how the agent is called in chat
	LLM      llm.Chatter         // nil: nothing is learnt from conversation
	Sanitize func(string) string // the secret sanitizer: every text the model sees or writes passes it
	Tokens   prompt.Counter      // counts conversation as a prompt would
	MaxItems int                 // the global cap on long-term items, Compact's default
	// ReplyTimeout is one reply's time; reading a batch may take twice it.
	ReplyTimeout time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

// Conversation is where messages are said: a group, or the private
// conversation of Sender with the agent. In a group, Sender is the person
// whose eyes recall reads with.
type Conversation struct {
	Group   string // "" in a private conversation
	Private bool
	Sender  string // hex
}

// Recalled is a memory item found for a conversation, with the event it
// was read from.
type Recalled struct {
	Item   memory.Item
	Event  string // its event id ("" when it came from RAM)
	Author string // the event's author ("" from RAM: the agent)
	Origin string // snowclaw.SearchHit.Origin: a remote relay's URL for its results
}

// Learning is the agent's learning. It always exists: what the owner asks
// (Compact, Status) works without a model; learning from conversation
// runs only with one that answers structured JSON (Enabled).
type Learning struct {
	o     Options
	env   Env
	host  Host
	mem   *memory.Store
	log   *slog.Logger
	model *extract.Learner // nil: learning from conversation is off
	q     *queue           // conversations waiting to be read
	st    counters         // what learning wrote
}

// New builds learning with o's defaults filled in; the model side only
// when o.Enabled and env.LLM answers structured JSON.
func New(o Options, env Env) (*Learning, error) {
	o.defaults()
	l := &Learning{o: o, env: env, host: env.Host, mem: env.Mem, log: env.Logger, q: newQueue()}
	if !o.Enabled || env.LLM == nil {
		return l, nil
	}
	m, ok := env.LLM.(llm.Structured)
	if !ok {
		l.log.Warn("learning from conversation is off: the model does not answer structured JSON", "model", env.LLM.Name())
		return l, nil
	}
	var err error
	l.model, err = extract.New(extract.Options{Model: m, CallsPerHour: o.CallsPerHour, Sanitize: env.Sanitize, Logger: env.Logger, Now: env.Now})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Enabled reports whether learning from conversation runs.
func (l *Learning) Enabled() bool { return l.model != nil }

// Run starts learning's background loops, which end when stop is closed:
// one reads the debounced conversations, one consolidates every
// CompactEvery. wg counts them.
func (l *Learning) Run(stop <-chan struct{}, wg *sync.WaitGroup) {
	if l.model == nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.loop(stop)
	}()
	if l.o.CompactEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.compactLoop(stop)
		}()
	}
}

// Offer queues a message of conversation c to be read with the rest of
// its batch.
func (l *Learning) Offer(c Conversation, m memory.HistoryMessage) {
	if l.model == nil {
		return
	}
	person := ""
	if c.Private {
		person = c.Sender
	}
	l.q.add(convKey(c.Group, person), c.Group, person, m, l.o)
}

// DropMessage, DropGroup and DropPerson keep what the relay deleted from
// being read: the message, a group's conversation, everything a person
// said or was told in private. What the batch being read learnt from
// them is not written.
func (l *Learning) DropMessage(id string) {
	l.q.drop(func(_ *batch, m memory.HistoryMessage) bool { return m.EventID == id })
}

func (l *Learning) DropGroup(g string) {
	l.q.drop(func(b *batch, _ memory.HistoryMessage) bool { return b.group == g })
}

func (l *Learning) DropPerson(pk string) {
	l.q.drop(func(b *batch, m memory.HistoryMessage) bool { return b.person == pk || m.Pubkey == pk })
}

// Idle reports whether no message waits to be read or is being read.
func (l *Learning) Idle() bool { return l.q.idle() }

// Close stops the debounce timers and drops what waits: at shutdown the
// model is not called (the conversation stays in the buffers).
func (l *Learning) Close() {
	if n := l.q.close(); n > 0 {
		l.log.Info("learning: unread messages left at shutdown", "messages", n)
	}
}
