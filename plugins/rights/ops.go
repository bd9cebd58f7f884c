package rights

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// Export is everything held about the person (access and portability,
// docs/privacy.md): their memories of every tier they may read, the agent's
// record of them, and their messages in the agent's buffers and index.
func (s *Service) Export(ctx context.Context, r Request) (*Export, error) {
	if err := s.check(r); err != nil {
		return nil, err
	}
	h, err := s.collect(ctx, r.Subject, false)
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "reading the store")
	}
	npub := snowclaw.NpubOf(r.Subject)
	x := NewExport(npub, s.o.Now())
	x.Agent = s.agentPK
	for _, m := range h.memories {
		x.AddEvent(m.evt, m.text)
	}
	if s.o.Agent != nil {
		p := s.o.Agent.Person(r.Subject)
		if p.Npub != nil {
			x.AddNpub(*p.Npub)
		}
		for _, it := range p.Items {
			x.AddItem(it, "")
		}
		for _, l := range p.Lessons {
			x.AddItem(lessonItem(l), "")
		}
		for _, m := range p.Messages {
			x.AddMessage(m)
		}
	}
	// their own messages as the search index holds them
	err = s.eachChat(ctx, r.Subject, func(text string, m memory.HistoryMessage) { x.AddMessage(m) })
	if err != nil {
		return nil, snowclaw.StoreFailed(err, "reading the store")
	}
	s.audit(r, "export", "", nil, fmt.Sprintf("%d records", x.RecordCount))
	return x, nil
}

// Match is one memory a forget would remove, as shown for confirmation.
type Match struct {
	ID    string `json:"id"`
	Topic string `json:"topic"`
	Text  string `json:"text"`
}

// Result is the outcome of a forget or destroy: a preview waiting for
// its confirmation token, or what was removed.
type Result struct {
	Preview bool    `json:"preview"`
	Token   string  `json:"token,omitempty"`
	Matches []Match `json:"matches,omitempty"`
	Deleted int     `json:"deleted"`
	Notes   int     `json:"notes_removed,omitempty"`
	Message string  `json:"message"`
}

// Forget removes the person's memories the selector picks. A search
// query is answered first with the matches and a token; the same request
// with the token removes exactly those.
func (s *Service) Forget(ctx context.Context, r Request, sel Selector, token string) (Result, error) {
	if err := s.check(r); err != nil {
		return Result{}, err
	}
	if err := sel.Validate(); err != nil {
		return Result{}, snowclaw.Invalid("%v", err)
	}
	if token != "" {
		p, err := s.confirms.Take(r.Subject, "forget", token)
		if err != nil {
			return Result{}, snowclaw.Invalid("%v", err)
		}
		return s.forgetIDs(ctx, r, p.Selector, p.IDs)
	}
	h, err := s.collect(ctx, r.Subject, false)
	if err != nil {
		return Result{}, snowclaw.StoreFailed(err, "reading the store")
	}
	var picked []held
	for _, m := range h.memories {
		if sel.Match(m.evt, m.text) {
			picked = append(picked, m)
		}
	}
	ids := make([]string, len(picked))
	for i, m := range picked {
		ids[i] = m.evt.ID
	}
	if sel.Kind() != "query" {
		return s.forgetIDs(ctx, r, sel, ids)
	}
	p := s.confirms.Issue(Pending{Subject: r.Subject, Op: "forget", Selector: sel, IDs: ids})
	res := Result{Preview: true, Token: p.Token}
	for _, m := range picked {
		res.Matches = append(res.Matches, Match{ID: m.evt.ID, Topic: strings.TrimPrefix(m.evt.Tags.GetD(), snowclaw.PrefixMemoryItem), Text: m.text})
	}
	res.Message = fmt.Sprintf("%d memories match; confirm with token %s to forget exactly these", len(picked), p.Token)
	s.audit(r, "forget-preview", sel.Kind(), nil, "")
	return res, nil
}

// forgetIDs removes the listed memories (those still present), from the
// store, the index and the agent's RAM, and the record's notes that match
// a query selector.
func (s *Service) forgetIDs(ctx context.Context, r Request, sel Selector, ids []string) (Result, error) {
	h, err := s.collect(ctx, r.Subject, false)
	if err != nil {
		return Result{}, snowclaw.StoreFailed(err, "reading the store")
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var evts []*nostr.Event
	ds := map[string]bool{}
	for _, m := range h.memories {
		if want[m.evt.ID] {
			evts = append(evts, m.evt)
			ds[m.evt.Tags.GetD()] = true
		}
	}
	res := Result{}
	if s.o.Agent != nil {
		s.o.Agent.EraseItems(func(it memory.Item) bool { return ds[agent.ItemD(it)] })
		s.o.Agent.EraseLessons(func(l memory.Lesson) bool { return ds[agent.LessonD(l)] })
		if sel.Kind() == "query" {
			res.Notes, err = s.o.Agent.ForgetNotes(ctx, r.Subject, func(note string) bool { return sel.Match(&nostr.Event{Kind: 1}, note) })
			if err != nil {
				return res, snowclaw.Internal("%v", err)
			}
		}
	}
	done, err := s.erase(ctx, evts)
	res.Deleted = len(done)
	res.Message = fmt.Sprintf("forgot %d memories", res.Deleted)
	s.audit(r, "forget", sel.Kind(), done, "")
	if err != nil {
		return res, snowclaw.Internal("some memories were not removed: %v", err)
	}
	return res, nil
}

// Destroy removes everything about the person, after a confirmation:
// without a token it answers with what would go and the token to confirm.
func (s *Service) Destroy(ctx context.Context, r Request, token string) (Result, error) {
	if err := s.check(r); err != nil {
		return Result{}, err
	}
	if token == "" {
		h, err := s.collect(ctx, r.Subject, true)
		if err != nil {
			return Result{}, snowclaw.StoreFailed(err, "reading the store")
		}
		n := len(h.memories) + len(h.others)
		if h.record != nil {
			n++
		}
		p := s.confirms.Issue(Pending{Subject: r.Subject, Op: "destroy"})
		s.audit(r, "destroy-preview", "", nil, fmt.Sprintf("%d events", n))
		return Result{Preview: true, Token: p.Token, Message: fmt.Sprintf("this removes %d events and everything the agent holds about this person, irreversibly; confirm with token %s", n, p.Token)}, nil
	}
	if _, err := s.confirms.Take(r.Subject, "destroy", token); err != nil {
		return Result{}, snowclaw.Invalid("%v", err)
	}
	// collect before the agent forgets: its RAM names the group-tier
	// items about the person
	h, err := s.collect(ctx, r.Subject, true)
	if err != nil {
		return Result{}, snowclaw.StoreFailed(err, "reading the store")
	}
	var items, msgs int
	if s.o.Agent != nil {
		if items, msgs, err = s.o.Agent.ErasePerson(ctx, r.Subject); err != nil {
			s.log.Error("agent flush after erasing a person", "err", err)
		}
	}
	evts := append([]*nostr.Event{}, h.others...)
	for _, m := range h.memories {
		evts = append(evts, m.evt)
	}
	if h.record != nil {
		evts = append(evts, h.record)
	}
	done, err := s.erase(ctx, evts)
	s.audit(r, "destroy", "", done, fmt.Sprintf("%d agent items, %d buffered messages", items, msgs))
	res := Result{Deleted: len(done), Message: fmt.Sprintf("destroyed: %d events, %d agent items and %d buffered messages removed", len(done), items, msgs)}
	if err != nil {
		return res, snowclaw.Internal("some events were not removed: %v", err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return res, ctx.Err()
	}
	return res, nil
}

// lessonItem shows a lesson in an export the way an item is shown: the
// person's words the agent learnt from, with the topic (and so the d tag)
// of its event, which merges the two into one record.
func lessonItem(l memory.Lesson) memory.Item {
	return memory.Item{
		ID: l.ID, Topic: memory.LessonTopic(l.ID), Text: l.Text, Source: l.Source,
		Tier: l.LessonTier(), Group: l.Group, Subject: l.Subject,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
	}
}
