package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/dynconfig"
	"github.com/snowclaw/snowclaw/agent/memory"
)

// The methods here serve the owner's tools (CLI through the HTTP API):
// they read and change RAM and leave persistence to the flusher, or flush
// at once where the owner expects it.

// Subject names what a memory command is about: a person or a group.
type Subject struct {
	Pubkey string // hex, for a person
	Group  string // for a group
}

// ParseSubject reads "npub1…", a hex key, or "group:<id>".
func ParseSubject(s string) (Subject, error) {
	if g, ok := strings.CutPrefix(s, "group:"); ok {
		if g == "" {
			return Subject{}, fmt.Errorf("%q: group id missing", s)
		}
		return Subject{Group: g}, nil
	}
	pk, err := snowclaw.ParsePubkey(strings.TrimPrefix(s, "npub:"))
	if err != nil {
		return Subject{}, fmt.Errorf("%q is neither a public key nor group:<id>", s)
	}
	return Subject{Pubkey: pk}, nil
}

// Snapshot is what the agent holds about a subject.
type Snapshot struct {
	Npub    *memory.Npub            `json:"npub,omitempty"`
	Group   *memory.Group           `json:"group,omitempty"`
	Items   []memory.Item           `json:"items"`
	History []memory.HistoryMessage `json:"history"`
}

// Get returns the record of a person or group, its memory items and its
// buffered messages.
func (a *Agent) Get(s Subject) (Snapshot, bool) {
	var snap Snapshot
	found := false
	if s.Group != "" {
		if g, ok := a.mem.Group(s.Group); ok {
			snap.Group, found = &g, true
		}
		snap.History = a.History(s.Group)
	} else {
		if n, ok := a.mem.Npub(s.Pubkey); ok {
			snap.Npub, found = &n, true
		}
		snap.History = a.History(dmKey(s.Pubkey))
	}
	for _, it := range a.mem.Items() {
		if (s.Group != "" && it.Group == s.Group) || (s.Pubkey != "" && it.Subject == s.Pubkey) {
			snap.Items = append(snap.Items, it)
			found = true
		}
	}
	return snap, found || len(snap.History) > 0
}

// Listing is every record key the agent holds.
type Listing struct {
	Npubs   []string `json:"npubs"`
	Groups  []string `json:"groups"`
	Items   int      `json:"items"`
	Lessons int      `json:"lessons"`
	Dirty   int      `json:"dirty"`
}

// List names every person and group with a record.
func (a *Agent) List() Listing {
	var l Listing
	for _, n := range a.mem.Npubs() {
		l.Npubs = append(l.Npubs, snowclaw.NpubOf(n.Pubkey))
	}
	for _, g := range a.mem.Groups() {
		l.Groups = append(l.Groups, "group:"+g.ID)
	}
	l.Items, l.Lessons, l.Dirty = len(a.mem.Items()), len(a.mem.Lessons()), a.mem.Dirty()
	return l
}

// AddOwnerNote and SetPref are the owner's annotations of a person.
func (a *Agent) AddOwnerNote(pk, note string) {
	if a.mem.Frozen(pk) {
		return
	}
	a.mem.TouchNpub(pk, a.o.Now().Unix(), "")
	a.mem.AddNote(pk, a.keys.Sanitize(note).Text, true)
	a.dirtied()
}

// An empty value deletes the preference, and the same key learnt in
// conversation too (memory.Facet): the owner's undo of a learnt one.
func (a *Agent) SetPref(pk, key, value string) {
	a.mem.TouchNpub(pk, a.o.Now().Unix(), "")
	a.mem.SetPref(pk, key, a.keys.Sanitize(value).Text)
	if value == "" {
		a.mem.ForgetLearntPref(pk, key)
	}
	a.dirtied()
}

// Items lists the long-term memory items.
func (a *Agent) Items() []memory.Item { return a.mem.Items() }

// DeleteItem forgets one item and deletes its event now.
func (a *Agent) DeleteItem(ctx context.Context, id string) error {
	gone := a.mem.Forget(func(it memory.Item) bool { return it.ID == id })
	if len(gone) == 0 {
		return fmt.Errorf("no memory item %q", id)
	}
	a.learning.Unlearn(gone)
	return a.flush(ctx)
}

// DeleteRecord drops a person's record (not their items) and deletes its
// event now.
func (a *Agent) DeleteRecord(ctx context.Context, s Subject) error {
	if s.Group != "" {
		if !a.mem.DropGroup(s.Group) {
			return fmt.Errorf("no record of group %q", s.Group)
		}
	} else if !a.mem.DropNpub(s.Pubkey) {
		return fmt.Errorf("no record of %s", snowclaw.NpubOf(s.Pubkey))
	}
	return a.flush(ctx)
}

// Lessons lists the lessons; SetLessonEnabled and DeleteLesson change them.
func (a *Agent) Lessons() []memory.Lesson { return a.mem.Lessons() }

func (a *Agent) SetLessonEnabled(id string, on bool) error {
	if err := a.mem.SetLessonEnabled(id, on); err != nil {
		return err
	}
	a.dirtied()
	return nil
}

func (a *Agent) DeleteLesson(ctx context.Context, id string) error {
	if _, err := a.mem.DeleteLesson(id); err != nil {
		return err
	}
	return a.flush(ctx)
}

// ConfigView is a scope's own setting and what applies there.
type ConfigView struct {
	Scope     string             `json:"scope"`
	Set       dynconfig.Patch    `json:"set"`
	Effective dynconfig.Settings `json:"effective"`
}

// Config shows a scope's dynamic config and the resolved settings.
func (a *Agent) Config(s dynconfig.Scope) ConfigView {
	v := ConfigView{Scope: s.String()}
	v.Set, _ = a.cfg.Get(s)
	switch s.Kind {
	case dynconfig.Group:
		v.Effective = a.cfg.Resolve("", s.ID)
	case dynconfig.Npub:
		v.Effective = a.cfg.Resolve(s.ID, "")
	default:
		v.Effective = a.cfg.Resolve("", "")
	}
	return v
}
