package rights

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Options wire the service to the relay.
type Options struct {
	Store       eventstore.Store
	Delete      func(ctx context.Context, evt *nostr.Event) error // hard delete: store and every index
	Agent       *agent.Agent                                      // nil when the agent is off
	AgentSecret string
	Owner       string // hex
	Audit       *Audit
	Erased      *Erased
	Logger      *slog.Logger
	Now         func() time.Time
	// HasGroup and IsMember answer for promotions to a group: a person may
	// only share into a group they belong to. nil: no group exists.
	HasGroup func(id string) bool
	IsMember func(group, pk string) bool
}

// Service is the rights service.
type Service struct {
	o        Options
	log      *slog.Logger
	codec    *memory.Codec
	agentPK  string
	confirms *Confirmations
}

// New builds the service.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Delete == nil || o.Audit == nil || o.Erased == nil {
		return nil, errors.New("rights: Store, Delete, Audit and Erased are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	codec, err := memory.NewCodec(o.AgentSecret)
	if err != nil {
		return nil, err
	}
	return &Service{
		o: o, log: o.Logger.With("component", "rights"), codec: codec, agentPK: codec.AgentPubkey,
		confirms: NewConfirmations(10*time.Minute, o.Now),
	}, nil
}

// Request says who asks, through what, about whom. Only the person
// themselves or the owner may act on the person's data.
type Request struct {
	Actor   string // hex pubkey that authenticated
	Via     string // "dm", "http", "cli"
	Subject string // hex pubkey of the person
}

// ErrForbidden is returned when the actor may not act on the subject.
var ErrForbidden = snowclaw.Restricted("only the person themselves or the relay's owner may do this")

func (s *Service) check(r Request) error {
	if r.Subject == "" || r.Actor == "" {
		return snowclaw.Invalid("no person named")
	}
	if r.Actor != r.Subject && (s.o.Owner == "" || r.Actor != s.o.Owner) {
		return ErrForbidden
	}
	return nil
}

// Blocks tells the relay to refuse an event that a forget or destroy
// erased (docs/access.md: deleted stays deleted).
func (s *Service) Blocks(evt *snowclaw.Event) bool { return s.o.Erased.Blocks(evt) }

// Audit lists the audit trail: the owner sees everyone's (or one
// person's), a person their own.
func (s *Service) Audit(actor, subject string) ([]AuditRecord, error) {
	if actor != s.o.Owner || s.o.Owner == "" {
		if subject != "" && subject != actor {
			return nil, ErrForbidden
		}
		subject = actor
	}
	return s.o.Audit.List(subject), nil
}

func (s *Service) audit(r Request, op, selector string, ids []string, note string) {
	_, err := s.o.Audit.Append(AuditRecord{Actor: r.Actor, Via: r.Via, Op: op, Subject: r.Subject, Selector: selector, Count: len(ids), IDs: ids, Note: note})
	if err != nil {
		s.log.Error("audit record not written", "op", op, "err", err)
	}
}

// Freeze stops new memories about the person (on) or resumes them.
func (s *Service) Freeze(ctx context.Context, r Request, on bool) error {
	if err := s.check(r); err != nil {
		return err
	}
	if s.o.Agent == nil {
		return snowclaw.Unsupported("the agent is off, so there is nothing to freeze")
	}
	if err := s.o.Agent.Freeze(ctx, r.Subject, on); err != nil {
		return snowclaw.Internal("%v", err)
	}
	op := "freeze"
	if !on {
		op = "unfreeze"
	}
	s.audit(r, op, "", nil, "")
	return nil
}

// erase hard-deletes events and records them as erased, so neither a
// client nor the agent can store them again.
func (s *Service) erase(ctx context.Context, evts []*nostr.Event) ([]string, error) {
	var ids, addrs []string
	var errs []error
	for _, evt := range evts {
		if err := s.o.Delete(ctx, evt); err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, evt.ID)
		if nostr.IsAddressableKind(evt.Kind) || nostr.IsReplaceableKind(evt.Kind) {
			addrs = append(addrs, snowclaw.Address(evt.Kind, evt.PubKey, evt.Tags.GetD()))
		}
	}
	if err := s.o.Erased.AddIDs(ids...); err != nil {
		errs = append(errs, err)
	}
	if err := s.o.Erased.AddAddresses(addrs...); err != nil {
		errs = append(errs, err)
	}
	return ids, errors.Join(errs...)
}
