package memsearch

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/plugins/workspace"
)

// Scopes are the index partitions (search.Doc.Scope): a search ranks over
// the scopes its reader may read and nothing else, so no score, rank,
// count or conflict a reader sees depends on a doc they may not read.
//
// How the readable set is derived without scanning docs: a scope's key is
// made of every event attribute the read rule (policies.Visibility) looks
// at, as snowclaw.ReadEvent read it — kind class, namespace and its
// subject, tier, the group (or that the h tags are refused), the author,
// the p tags, encryption, expiration. Two events with the same key
// are therefore readable by exactly the same readers, whatever the rule
// decides, so the rule is asked once per scope, about one event of it (the
// probe, kept with its content stripped). The rule stays the one place
// that decides: group membership, privacy flags and who owns a private
// memory (snowclaw.Event.Person) are read live at each search. Only docs
// that every reader may read whoever wrote them (no group, no restricted
// namespace) share the one "public" scope; elsewhere the author is part
// of the key, so an author's own-event exception cannot open anyone else's
// docs to them.
//
// The agent reads every scope; workspace file chunks are their own scope,
// readable by the owner and the agent.

const publicScope = "public"

// scopeOf is the scope of a stored event's doc.
func scopeOf(evt *snowclaw.Event, volatile bool) string {
	ns, subject, tier := evt.Namespace, evt.Subject, evt.Tier
	open := evt.Group == "" && evt.GroupErr == nil && !evt.Expires && !volatile && !evt.Encrypted &&
		(evt.Kind != snowclaw.KindAppData || (ns == snowclaw.NamespaceMemoryItem && tier == snowclaw.TierPublic))
	if open {
		return publicScope
	}
	if ns == snowclaw.NamespaceMemoryItem {
		subject = "" // a topic is no input of the read rule
	}
	ps := slices.Clone(evt.P)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	exp := ""
	if evt.Expires {
		exp = strconv.FormatInt(int64(evt.Expiration), 10)
	}
	parts := []string{
		strconv.Itoa(kindClass(evt.Kind)), strconv.Itoa(int(ns)), subject, string(tier),
		evt.Group, evt.PubKey, strings.Join(ps, ","), exp,
		strconv.FormatBool(evt.Encrypted), strconv.FormatBool(volatile),
	}
	if evt.GroupErr != nil {
		// refused h tags: the read rule's own case, apart from any
		// group, MalformedGroup's namesake included
		parts = append(parts, "malformed-h")
	}
	var b strings.Builder
	for _, part := range parts {
		b.WriteString(part)
		b.WriteByte('|')
	}
	return b.String()
}

// kindClass: the read rule treats every indexed kind but app data alike.
func kindClass(kind int) int {
	if kind == snowclaw.KindAppData {
		return kind
	}
	return 1
}

// remember keeps a probe event for scope, so readable can ask the read
// rule about it.
func (p *Plugin) remember(scope string, evt *nostr.Event) {
	p.scopeMu.RLock()
	_, ok := p.probes[scope]
	p.scopeMu.RUnlock()
	if ok {
		return
	}
	probe := &nostr.Event{Kind: evt.Kind, PubKey: evt.PubKey, CreatedAt: evt.CreatedAt, Tags: slices.Clone(evt.Tags)}
	p.scopeMu.Lock()
	if _, ok := p.probes[scope]; !ok {
		p.probes[scope] = probe
	}
	p.scopeMu.Unlock()
}

// readable is the read rule at scope level for reader (nil: every scope).
func (p *Plugin) readable(reader string) func(string) bool {
	if reader != "" && reader == p.opts.AgentPubkey {
		return nil
	}
	return func(scope string) bool {
		if scope == workspace.Scope {
			return p.files != nil && p.files.CanRead(reader)
		}
		p.scopeMu.RLock()
		probe := p.probes[scope]
		p.scopeMu.RUnlock()
		return probe != nil && p.opts.CanRead(reader, probe)
	}
}

// CountFor is the number of indexed docs reader may read, the only index
// count a reader is shown.
func (p *Plugin) CountFor(reader string) int {
	if p.rebuilding.Load() || p.loading.Load() {
		return 0
	}
	p.flush(context.Background())
	return p.ix.CountReadable(p.readable(reader))
}
