package agent

import (
	"context"
	"regexp"
	"strings"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/agent/memory"
	"github.com/snowclaw/snowclaw/agent/privmsg"
)

// turn is one incoming message the agent may learn from and answer.
type turn struct {
	group   string // "" in a private conversation
	private bool
	sender  string // hex
	msg     memory.HistoryMessage
	history []memory.HistoryMessage // before msg, oldest first
	replyTo *nostr.Event            // the group event answered (nil in private)
	note    string                  // what the agent just learnt, for the prompt
}

// handle is the agent's view of one stored or ephemeral event.
func (a *Agent) handle(evt *snowclaw.Event) {
	defer a.handled.Add(1)
	switch {
	case evt.Kind == snowclaw.KindProfile:
		a.seeProfile(evt.Event)
	case evt.Kind == snowclaw.KindAppData:
		a.seeAppData(evt)
	case evt.Kind == snowclaw.KindGiftWrap:
		a.seeGiftWrap(evt)
	case evt.Kind == snowclaw.KindGroupMetadata:
		a.seeGroupMetadata(evt)
	case evt.Kind == snowclaw.KindDeleteGroup:
		// stored, so the relay carried it out (see GroupDeleted)
		a.GroupDeleted(evt.Group)
	case isChat(evt):
		a.seeGroupMessage(evt)
	}
}

// isChat tells the group messages the agent buffers: NIP-29 user kinds
// carried with an h tag (chat, threads, replies, notes).
func isChat(evt *snowclaw.Event) bool {
	if evt.Group == "" {
		return false
	}
	switch evt.Kind {
	case 1, 9, 10, 11, 12, 1111:
		return true
	}
	return false
}

// seeProfile records a kind 0 display name of someone the agent knows;
// for anyone else the store only caches it in RAM until they interact
// (memory.Store.SeeName), so profile spam creates no records.
func (a *Agent) seeProfile(evt *nostr.Event) {
	p, err := snowclaw.ProfileOf(evt)
	name := p.Shown()
	if err != nil || name == "" {
		return
	}
	name = a.keys.Sanitize(name).Text
	if a.mem.SeeName(evt.PubKey, name, int64(evt.CreatedAt)) {
		a.dirtied()
	}
}

// seeAppData applies owner config; everything else of kind 30078 is
// either the agent's own (never fed back) or someone's memory item that
// the search index, not the agent's RAM, serves.
func (a *Agent) seeAppData(evt *snowclaw.Event) {
	if evt.Namespace != snowclaw.NamespaceConfig {
		return
	}
	scope, err := a.cfg.Apply(evt.Event, a.o.Owner)
	if err != nil {
		a.log.Warn("config event ignored", "id", evt.ID, "author", evt.PubKey, "reason", err)
		return
	}
	a.log.Info("dynamic config applied", "scope", scope.String(), "id", evt.ID)
	a.resizeRings()
}

// seeGroupMetadata keeps the group's name and purpose from the relay's
// kind 39000.
func (a *Agent) seeGroupMetadata(evt *snowclaw.Event) {
	id := evt.D
	if id == "" {
		return
	}
	var name, about string
	if t := evt.Tags.Find("name"); len(t) >= 2 {
		name = t[1]
	}
	if t := evt.Tags.Find("about"); len(t) >= 2 {
		about = t[1]
	}
	a.mem.TouchGroup(id, int64(evt.CreatedAt))
	if a.mem.SetGroupInfo(id, a.keys.Sanitize(name).Text, a.keys.Sanitize(about).Text) {
		a.dirtied()
	}
}

// seeGroupMessage is the turn path of a group: sanitize, remember the
// sender and the group, buffer the message (whatever the respond mode),
// act on explicit intents, and reply when the respond mode says so.
func (a *Agent) seeGroupMessage(evt *snowclaw.Event) {
	group, at := evt.Group, int64(evt.CreatedAt)
	clean := a.sanitize(evt.ID, evt.Content)
	person := a.mem.TouchNpub(evt.PubKey, at, group)
	a.mem.TouchGroup(group, at)
	msg := memory.HistoryMessage{
		Sender: person.Name(), Npub: snowclaw.NpubOf(evt.PubKey), Pubkey: evt.PubKey,
		Content: clean, EventID: evt.ID, Group: group, Kind: evt.Kind,
		Timestamp: at, IsOwner: evt.PubKey == a.o.Owner,
	}
	if a.mem.SeeMember(group, msg.Npub, msg.Sender) {
		a.dirtied()
	}
	addressed := a.mentioned(evt, clean)
	learnNow, replies := addressed || a.cfg.Resolve(evt.PubKey, group).RespondMode == "all", a.shouldReply(evt.PubKey, group, addressed)
	turn := turn{group: group, sender: evt.PubKey, msg: msg, replyTo: evt.Event}
	if learnNow || (replies && a.o.LLM != nil) { // the ring is copied only for a prompt that shows it
		turn.history = a.ring(group).Messages()
	}
	a.ring(group).Push(msg)
	a.seeGroupTopics(group, clean, evt)
	if learnNow {
		turn.note = a.told(turn)
	}
	a.queueLearn(turn)
	if replies {
		a.reply(turn)
	}
}

// seeGiftWrap opens a private message to the agent and runs the private
// turn path: the person's own buffer, their private memory, a private
// reply.
func (a *Agent) seeGiftWrap(evt *snowclaw.Event) {
	if !evt.Names(a.pk) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.o.ReplyTimeout)
	defer cancel()
	pm, err := privmsg.Unwrap(ctx, evt.Event, a.sk)
	if err != nil {
		a.log.Warn("private message not opened", "wrap", evt.ID, "reason", err)
		return
	}
	if pm.From == a.pk {
		return // the copy of our own reply
	}
	if !a.backlog.wasSeen(pm.ID) && a.privateCommand(pm.From, pm.ID, pm.Content) {
		return
	}
	at := int64(pm.CreatedAt)
	clean := a.sanitize(pm.ID, pm.Content)
	person := a.mem.TouchNpub(pm.From, at, "")
	msg := memory.HistoryMessage{
		Sender: person.Name(), Npub: snowclaw.NpubOf(pm.From), Pubkey: pm.From,
		Content: clean, EventID: pm.ID, Kind: pm.Kind,
		Timestamp: at, IsOwner: pm.From == a.o.Owner,
	}
	key := dmKey(pm.From)
	t := turn{sender: pm.From, msg: msg, history: a.ring(key).Messages(), private: true}
	a.ring(key).Push(msg)
	t.note = a.told(t)
	a.queueLearn(t)
	if a.shouldReply(pm.From, "", true) {
		a.reply(t)
	}
}

// sanitize redacts secrets before the text goes anywhere (buffer, index,
// log, prompt); the log line carries counts, never the text.
func (a *Agent) sanitize(id, s string) string {
	out := a.keys.Sanitize(s)
	if out.RedactedNsec > 0 || out.FlaggedHex > 0 {
		a.log.Warn("secret-looking text sanitized", "id", id, "nsec_redacted", out.RedactedNsec, "hex_flagged", out.FlaggedHex)
	}
	return out.Text
}

// mentioned is the mention rule: the agent's pubkey in a p tag, or its
// name or npub in the text.
func (a *Agent) mentioned(evt *snowclaw.Event, text string) bool {
	if evt.Names(a.pk) {
		return true
	}
	low := strings.ToLower(text)
	return strings.Contains(low, strings.ToLower(a.o.Name)) || strings.Contains(text, a.npub)
}

func dmKey(pk string) string { return "dm:" + pk }

// decisionRE finds a decision stated in a group (the group record keeps
// them: docs/agent.md#records-of-people-and-groups); an LLM-free
// heuristic on purpose, so the record fills with no model configured.
var decisionRE = regexp.MustCompile(`(?is)^\s*(?:decision|decided|we decided(?: that| to)?|agreed|we agreed(?: that| to)?|决定)[\s:：,，]+(.{3,300})$`)

// seeGroupTopics updates the group record from a message: its
// t tags are the group's themes; a stated decision is kept with its time.
func (a *Agent) seeGroupTopics(group, text string, evt *snowclaw.Event) {
	changed := false
	for _, t := range snowclaw.TagValues(evt.Event, "t") {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" && len(t) <= 64 {
			changed = a.mem.AddTheme(group, t) || changed
		}
	}
	if m := decisionRE.FindStringSubmatch(text); m != nil {
		changed = a.mem.AddDecision(group, strings.TrimSpace(m[1]), int64(evt.CreatedAt)) || changed
	}
	if changed {
		a.dirtied()
	}
}
