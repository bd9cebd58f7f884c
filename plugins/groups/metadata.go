package groups

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/policies"
	"github.com/snowclaw/snowclaw/relay/store"
)

// The relay-signed 39000–39003 are output, never input: the state is
// derived from moderation events alone, and the metadata is rendered from
// the state. Rendering is a pure function of the state, so instances that
// agree publish identical events (same content, same second: the same
// id). An event is dated now, never ahead, by the cluster's one clock
// (Options.Clock: over a shared store, the store's), so no instance dates
// a version ahead of the others and every new version is newer than the
// one it replaces; one stored ahead all the same (by an older release)
// is waited for when a second ahead, deleted when further. When the stored version is
// already dated this second, the new one must win NIP-01's tie-break (the
// lower id): a nonce tag is counted up from 0 until its id is lower,
// which every instance does alike. A few versions a second are written
// so; past maxPerSecond a group's update waits for the next second, so a
// flood of joins costs a handful of versions per group per second.

// metadataKinds are the relay-signed state events of a group.
var metadataKinds = []int{snowclaw.KindGroupMetadata, snowclaw.KindGroupAdmins, snowclaw.KindGroupMembers, snowclaw.KindGroupRoles, snowclaw.KindGroupPins}

// metadataEvents renders the relay-signed state events of a group
// (39000–39003, and 39005 once it has pins), unsigned and undated, within
// the relay's size limits: a list of people longer than an event may hold
// is cut to its first entries by public key (NIP-29 lets a relay publish a
// subset), and says so in its content. parent and children are the
// group's place in the subgroup tree (Groups.parentOf, Groups.children).
func metadataEvents(g *Group, encrypted bool, parent string, children []string, limits policies.Limits) []*nostr.Event {
	meta := nostr.Tags{{"d", g.ID}, {snowclaw.TagGroupName, g.Name}}
	for _, f := range [][2]string{{snowclaw.TagGroupPicture, g.Picture}, {snowclaw.TagGroupBanner, g.Banner}, {snowclaw.TagGroupAbout, g.About}} {
		if f[1] != "" {
			meta = append(meta, nostr.Tag{f[0], f[1]})
		}
	}
	flags := snowclaw.GroupFlags{Private: g.Private, Restricted: g.Restricted, Hidden: g.Hidden, Closed: g.Closed}.Tags()
	if encrypted {
		flags = append(flags, nostr.Tag{snowclaw.TagEncrypted})
	}
	sort.SliceStable(flags, func(i, j int) bool { return flags[i][0] < flags[j][0] })
	meta = append(meta, flags...)
	if parent != "" {
		meta = append(meta, nostr.Tag{snowclaw.TagGroupParent, parent})
	}
	for _, c := range children {
		meta = append(meta, nostr.Tag{snowclaw.TagGroupChild, c})
	}

	members := make([]string, 0, len(g.Members))
	var holders []string
	for pk, roles := range g.Members {
		members = append(members, pk)
		if len(roles) > 0 {
			holders = append(holders, pk)
		}
	}
	sort.Strings(members)
	sort.Strings(holders)
	// every role holder, so an admin can tell who holds what
	admins, adminsNote := listTags(g.ID, holders, func(pk string) nostr.Tag { return append(nostr.Tag{"p", pk}, g.Members[pk]...) }, limits)
	memberTags, membersNote := listTags(g.ID, members, func(pk string) nostr.Tag { return nostr.Tag{"p", pk} }, limits)
	roles := nostr.Tags{{"d", g.ID}}
	for _, r := range roleDescriptions {
		roles = append(roles, nostr.Tag{"role", r[0], r[1]})
	}
	out := []*nostr.Event{
		{Kind: snowclaw.KindGroupMetadata, Tags: meta},
		{Kind: snowclaw.KindGroupAdmins, Tags: admins, Content: "admins of group " + g.ID + adminsNote},
		{Kind: snowclaw.KindGroupMembers, Tags: memberTags, Content: "members of group " + g.ID + membersNote},
		{Kind: snowclaw.KindGroupRoles, Tags: roles, Content: "roles supported by this relay"},
	}
	if g.PinsSet {
		out = append(out, &nostr.Event{Kind: snowclaw.KindGroupPins, Tags: append(nostr.Tags{{"d", g.ID}}, g.Pins...), Content: "pinned events of group " + g.ID})
	}
	return out
}

// listSlack is room left in a list event for its content, signature and
// JSON around the tags.
const listSlack = 1024

// listTags is a d tag and one tag per key, as many as the limits let one
// event hold, and a note for the content when some were left out.
func listTags(gid string, keys []string, tag func(string) nostr.Tag, limits policies.Limits) (nostr.Tags, string) {
	out := nostr.Tags{{"d", gid}}
	size := listSlack + len(gid)
	for i, k := range keys {
		t := tag(k)
		n := 0
		for _, v := range t {
			n += len(v) + 3
		}
		if (limits.MaxTags > 0 && len(out) >= limits.MaxTags) || (limits.MaxEventBytes > 0 && size+n > limits.MaxEventBytes) {
			return out, fmt.Sprintf(" (the first %d of %d by public key)", i, len(keys))
		}
		out = append(out, t)
		size += n
	}
	return out, ""
}

// metaPublisher keeps the stored metadata equal to the state. A group is
// due (dirty) after a change this instance made; it is checked (verify)
// after another instance published the group's metadata and the group
// has been quiet for a while, so that a change whose metadata its
// instance never published (it stopped) is published by another.
//
// A group's mark says which change made it due (a number from gen): a
// write of the metadata clears only the mark it started from, because a
// change applied while it ran may be missing from what it wrote. Clearing
// any mark lost that change's metadata until the group changed again.
type metaPublisher struct {
	s *Groups

	mu      sync.Mutex
	dirty   map[string]uint64 // group → its mark
	gen     uint64
	covered map[string]uint64    // group → the newest mark a finished write covered
	verify  map[string]time.Time // when to check
	last    map[string]nostr.Timestamp
	recent  map[recentKey]perSecond // versions written in the last second
	wake    chan struct{}

	// one group's metadata is written by one goroutine at a time: a
	// channel of one slot, so a wait for it is one that testing/synctest
	// can see
	run  chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

type recentKey struct {
	group string
	kind  int
}

type perSecond struct {
	at nostr.Timestamp
	n  int
}

// maxPerSecond is how many versions of a group's metadata are written in
// one second before an update waits for the next.
const maxPerSecond = 4

// maxNonce bounds the search for a lower id: each step halves the odds,
// so a version that needs more waits for the next second instead.
// maxNonceBytes bounds it by the bytes hashed as well: the search runs
// in the saved hooks of the write that changed the group, whose OK
// waits, and a member list of thousands is hundreds of KB per try (a
// 5,000-member list held a join's OK for over 5 s).
const (
	maxNonce      = 1 << 14
	maxNonceBytes = 16 << 20
)

// nonceTries is how many tries the search for a lower id may make for an
// event that serializes to size bytes.
func nonceTries(size int) int { return min(maxNonce, max(1, maxNonceBytes/max(size, 1))) }

// verifyAfter is how long a group stays quiet before an instance checks
// metadata another instance published.
const verifyAfter = 2 * time.Second

func newMetaPublisher(s *Groups) *metaPublisher {
	return &metaPublisher{
		s:       s,
		dirty:   make(map[string]uint64),
		covered: make(map[string]uint64),
		verify:  make(map[string]time.Time),
		last:    make(map[string]nostr.Timestamp),
		recent:  make(map[recentKey]perSecond),
		wake:    make(chan struct{}, 1),
		run:     make(chan struct{}, 1),
	}
}

// stored notes relay-signed metadata of a group as it is stored: its
// date, and for another instance's a check later.
func (p *metaPublisher) stored(evt *nostr.Event, fromPeer bool) {
	gid := evt.Tags.GetD()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[gid] = max(p.last[gid], evt.CreatedAt)
	if fromPeer {
		p.verify[gid] = time.Now().Add(verifyAfter)
	}
}

// changed marks gid's metadata due after a change this instance made,
// and writes it at once when this second has room for it, so the change's
// metadata is in the store before its OK; else it leaves it to the loop.
// A write of the group's metadata under way (the loop's, or another
// change's) is waited for, not taken as this one's: it may have read the
// state before this change. The write after it covers every change that
// waited meanwhile, so under a flood of changes one write answers many.
func (p *metaPublisher) changed(ctx context.Context, gid string) {
	p.mu.Lock()
	mark := p.markLocked(gid)
	now := p.now()
	fresh := p.last[gid] < now || p.recent[recentKey{gid, snowclaw.KindGroupMembers}].n < maxPerSecond
	p.mu.Unlock()
	if fresh && p.s.publish != nil && p.write(ctx, gid, mark) {
		return
	}
	p.poke()
}

// markLocked marks gid due (p.mu held) and returns the mark.
func (p *metaPublisher) markLocked(gid string) uint64 {
	p.gen++
	p.dirty[gid] = p.gen
	return p.gen
}

// write brings gid's stored metadata in line with the state (flush) and
// clears its mark if no change came meanwhile; one that fails leaves gid
// marked. A write for a change (need, its mark; 0 for none) that a write
// finished while it waited has covered is not repeated. No saved hook of
// what flush publishes (metadata kinds) comes back here, so waiting for
// run cannot deadlock.
func (p *metaPublisher) write(ctx context.Context, gid string, need uint64) bool {
	p.run <- struct{}{}
	defer func() { <-p.run }()
	// every change marked by now was applied to the state flush reads
	p.mu.Lock()
	mark := p.dirty[gid]
	covered := need != 0 && p.covered[gid] >= need
	p.mu.Unlock()
	if covered {
		return true
	}
	done := p.flush(ctx, gid)
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.dirty[gid]
	switch {
	case !done && !ok:
		p.markLocked(gid)
	case done:
		p.covered[gid] = max(p.covered[gid], mark)
		if ok && cur == mark {
			delete(p.dirty, gid)
		}
	}
	return done
}

// now is the metadata's date: the plugin's clock, in seconds.
func (p *metaPublisher) now() nostr.Timestamp { return nostr.Timestamp(p.s.opts.Clock().Unix()) }

func (p *metaPublisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// start runs the loop until ctx ends.
func (p *metaPublisher) start(ctx context.Context) {
	ctx, p.stop = context.WithCancel(ctx)
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		p.loop(ctx)
	}()
}

// close stops the loop and writes what is still due, once.
func (p *metaPublisher) close(ctx context.Context) {
	if p.stop == nil {
		return
	}
	p.stop()
	<-p.done
	p.Flush(ctx)
}

func (p *metaPublisher) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
		next := p.pass(ctx, time.Now())
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// pass writes every due group it can now and returns how long to wait
// for the next pass.
func (p *metaPublisher) pass(ctx context.Context, now time.Time) time.Duration {
	p.mu.Lock()
	var due []string
	for gid := range p.dirty {
		due = append(due, gid)
	}
	wait := time.Hour
	for gid, when := range p.verify {
		if _, ok := p.dirty[gid]; ok {
			delete(p.verify, gid)
			continue
		}
		if now.Before(when) {
			wait = min(wait, when.Sub(now))
			continue
		}
		delete(p.verify, gid)
		due = append(due, gid)
	}
	p.mu.Unlock()
	for _, gid := range due {
		if ctx.Err() != nil {
			return wait
		}
		if p.s.quietFor(gid, now) < verifyAfter && !p.isDirty(gid) {
			// another instance is still changing it and publishing
			p.mu.Lock()
			p.verify[gid] = now.Add(verifyAfter)
			p.mu.Unlock()
			wait = min(wait, verifyAfter)
			continue
		}
		p.write(ctx, gid, 0)
	}
	p.mu.Lock()
	cur := p.now()
	for k, r := range p.recent {
		if r.at < cur {
			delete(p.recent, k) // a past second's budget
		}
	}
	if len(p.dirty) > 0 {
		// the next second
		wait = min(wait, time.Until(time.Unix(now.Unix()+1, 0))+10*time.Millisecond)
	}
	p.mu.Unlock()
	return max(wait, 10*time.Millisecond)
}

func (p *metaPublisher) isDirty(gid string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.dirty[gid]
	return ok
}

// quietFor is how long ago this instance last applied a change to gid
// (a long time for a group it does not have).
func (s *Groups) quietFor(gid string, now time.Time) time.Duration {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if g := s.groups[gid]; g != nil && !g.changedAt.IsZero() {
		return now.Sub(g.changedAt)
	}
	return time.Hour
}

// Flush writes the metadata of every group that is due, waiting for the
// next second where it must: what shutting down and the tests use.
func (p *metaPublisher) Flush(ctx context.Context) {
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		p.mu.Lock()
		var due []string
		for gid := range p.dirty {
			due = append(due, gid)
		}
		p.mu.Unlock()
		if len(due) == 0 {
			return
		}
		for _, gid := range due {
			p.write(ctx, gid, 0)
		}
		if p.anyDirty() {
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(time.Unix(time.Now().Unix()+1, 0)) + 10*time.Millisecond):
			}
		}
	}
}

func (p *metaPublisher) anyDirty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.dirty) > 0
}

// flush brings gid's stored metadata in line with the state (p.run
// held): true when it is, false when it must be tried again (this second
// already has a version, or the store failed).
func (p *metaPublisher) flush(ctx context.Context, gid string) bool {
	s := p.s
	if s.publish == nil {
		return false
	}
	s.mu.RLock()
	g := s.groups[gid]
	var want []*nostr.Event
	if g != nil {
		want = metadataEvents(g, g.Encrypted || s.forcedEncrypted(gid), s.parentOf(g), s.children(gid), s.opts.Limits)
	}
	s.mu.RUnlock()
	have, err := p.read(ctx, gid)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("reading a group's metadata", "group", gid, "err", err)
		}
		return false
	}
	now := p.now()
	if want == nil {
		// no such group: its metadata goes (a deletion cut short)
		for _, old := range have {
			if err := s.del(ctx, old); err != nil {
				s.log.Error("deleting a deleted group's metadata", "group", gid, "err", err)
				return false
			}
		}
		return true
	}
	var stale []*nostr.Event
	for _, evt := range want {
		if old := have[evt.Kind]; old != nil && sameList(old, evt) {
			continue
		}
		stale = append(stale, evt)
	}
	if len(stale) == 0 {
		return true
	}
	for _, evt := range stale {
		old := have[evt.Kind]
		switch {
		case old == nil:
		case old.CreatedAt > now+1:
			// dated ahead of the clock (by an older release, or a clock
			// that was wrong): nothing dated now could replace it
			if err := s.del(ctx, old); err != nil {
				s.log.Error("deleting metadata dated in the future", "group", gid, "err", err)
				return false
			}
		case old.CreatedAt > now:
			return false // a clock a second ahead: the next second
		}
	}
	done := true
	for _, evt := range stale {
		if !p.take(gid, evt.Kind, now) {
			done = false // this kind has had its versions this second
			continue
		}
		evt.CreatedAt = now
		if old := have[evt.Kind]; old != nil && old.CreatedAt == now && !lowerID(evt, s.opts.IDs.Relay, old.ID) {
			done = false
			continue
		}
		if err := s.signAndPublish(ctx, evt); err != nil {
			return false
		}
	}
	p.mu.Lock()
	p.last[gid] = max(p.last[gid], now)
	p.mu.Unlock()
	// another instance may have written the same second with other
	// content and won the tie (NIP-01: lower id): read it back
	have, err = p.read(ctx, gid)
	if err != nil {
		return false
	}
	for _, evt := range stale {
		if old := have[evt.Kind]; old == nil || !sameList(old, evt) {
			return false
		}
	}
	return done
}

// take counts a version of gid's kind written at now, or reports false
// when the second has had maxPerSecond of them.
func (p *metaPublisher) take(gid string, kind int, now nostr.Timestamp) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := recentKey{gid, kind}
	r := p.recent[k]
	if r.at != now {
		r = perSecond{at: now}
	}
	if r.n >= maxPerSecond {
		return false
	}
	p.recent[k] = perSecond{at: now, n: r.n + 1}
	return true
}

// read is gid's stored relay-signed metadata, the newest of each kind.
func (p *metaPublisher) read(ctx context.Context, gid string) (map[int]*nostr.Event, error) {
	out := make(map[int]*nostr.Event, len(metadataKinds))
	err := store.Each(ctx, p.s.opts.Store, nostr.Filter{
		Kinds: metadataKinds, Authors: []string{p.s.opts.IDs.Relay}, Tags: nostr.TagMap{"d": {gid}},
	}, func(evt *nostr.Event) bool {
		if evt.Tags.GetD() != gid {
			return true
		}
		if old := out[evt.Kind]; old == nil || evt.CreatedAt > old.CreatedAt {
			out[evt.Kind] = evt
		}
		return true
	})
	return out, err
}

// sameList reports whether two renderings say the same (a nonce says
// nothing).
func sameList(a, b *nostr.Event) bool {
	return a.Content == b.Content && slices.EqualFunc(withoutNonce(a.Tags), withoutNonce(b.Tags), func(x, y nostr.Tag) bool { return slices.Equal(x, y) })
}

func withoutNonce(tags nostr.Tags) nostr.Tags {
	if n := len(tags); n > 0 && len(tags[n-1]) > 0 && tags[n-1][0] == "nonce" {
		return tags[:n-1]
	}
	return tags
}

// lowerID adds a nonce tag to evt (dated, unsigned, by author), counting
// up from 0 until its id is below the given one: NIP-01 keeps the version
// with the lower id when two share a second. False when none was found
// within nonceTries.
func lowerID(evt *nostr.Event, author, below string) bool {
	evt.PubKey = author
	evt.Tags = append(evt.Tags, nostr.Tag{"nonce", ""})
	last := len(evt.Tags) - 1
	for n := range nonceTries(len(evt.Serialize())) {
		evt.Tags[last][1] = strconv.Itoa(n)
		if evt.GetID() < below {
			return true
		}
	}
	evt.Tags = evt.Tags[:last]
	return false
}

func (s *Groups) publishSigned(ctx context.Context, kind int, tags nostr.Tags, content string) {
	_ = s.signAndPublish(ctx, &nostr.Event{Kind: kind, Tags: tags, Content: content, CreatedAt: nostr.Timestamp(s.opts.Clock().Unix())})
}

func (s *Groups) signAndPublish(ctx context.Context, evt *nostr.Event) error {
	if s.publish == nil {
		return fmt.Errorf("groups: not wired to a relay")
	}
	if err := evt.Sign(s.opts.RelaySecret); err != nil {
		s.log.Error("signing group event", "kind", evt.Kind, "err", err)
		return err
	}
	if err := s.publish(ctx, evt); err != nil {
		level := slog.LevelError
		if snowclaw.ReasonOf(err) == snowclaw.ReasonDuplicate {
			// another instance wrote a version of the same second first:
			// the metadata is read back and written again (flush)
			level = slog.LevelDebug
		}
		e := snowclaw.ReadEvent(evt)
		s.log.Log(ctx, level, "publishing group event", "kind", evt.Kind, "group", e.Group+e.D, "err", err)
		return err
	}
	return nil
}
