package memory

import (
	"errors"
	"strconv"

	"github.com/snowclaw/snowclaw"
)

// ErrNotFound is returned for a record id the store does not hold.
var ErrNotFound = errors.New("memory: no such record")

// RecordKind says which of the four record kinds a Key names.
type RecordKind int

const (
	KindNpub RecordKind = iota + 1
	KindGroup
	KindItem
	KindLesson
)

func (k RecordKind) String() string {
	switch k {
	case KindNpub:
		return "npub"
	case KindGroup:
		return "group"
	case KindItem:
		return "item"
	case KindLesson:
		return "lesson"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Key names one record: its kind, its id in the store (hex pubkey, group
// id, item id, lesson id) and the d tag of its event. The d tag travels with
// the key because a removed record is gone from the store by the time its
// deletion is published, and an item's d tag cannot be rebuilt from its id.
type Key struct {
	Kind RecordKind
	ID   string
	D    string
}

// DTag is the d tag of the record's event: k.D when set, else rebuilt from
// the id for the kinds where that is possible ("" for an item without D).
func (k Key) DTag() string {
	if k.D != "" {
		return k.D
	}
	switch k.Kind {
	case KindNpub:
		if pk, err := snowclaw.ParsePubkey(k.ID); err == nil {
			return snowclaw.PrefixMemoryNpub + snowclaw.NpubOf(pk)
		}
	case KindGroup:
		return snowclaw.PrefixMemoryGroup + k.ID
	case KindLesson:
		return snowclaw.PrefixMemoryItem + LessonTopic(k.ID)
	}
	return ""
}

// AddressOf is the NIP-33 address "30078:<agent pubkey>:<d>" of a record's
// event, what a NIP-09 deletion names in its a tag. It is "" when the d tag
// is unknown.
func AddressOf(k Key, agentPubkey string) string {
	d := k.DTag()
	if d == "" || agentPubkey == "" {
		return ""
	}
	return snowclaw.Address(snowclaw.KindAppData, agentPubkey, d)
}

// keyOf builds the full key of a record, d tag included.
func keyOf(kind RecordKind, id, topic string) Key {
	k := Key{Kind: kind, ID: id}
	if kind == KindItem {
		k.D = snowclaw.PrefixMemoryItem + topic
	} else {
		k.D = k.DTag()
	}
	return k
}

// ref is the identity of a record inside the store, without the d tag.
type ref struct {
	kind RecordKind
	id   string
}

// Record is one decoded or to-be-encoded record: exactly one of the four
// pointers is set. CreatedAt is the event's created_at (0 on Encode: now).
type Record struct {
	Npub      *Npub
	Group     *Group
	Item      *Item
	Lesson    *Lesson
	CreatedAt int64
}

// Key is the store key of the record, or the zero Key when the record does
// not hold exactly one kind.
func (r Record) Key() Key {
	if r.count() != 1 {
		return Key{}
	}
	switch {
	case r.Npub != nil:
		return keyOf(KindNpub, r.Npub.Pubkey, "")
	case r.Group != nil:
		return keyOf(KindGroup, r.Group.ID, "")
	case r.Item != nil:
		return keyOf(KindItem, r.Item.ID, r.Item.Topic)
	}
	return keyOf(KindLesson, r.Lesson.ID, "")
}

func (r Record) count() int {
	n := 0
	for _, set := range []bool{r.Npub != nil, r.Group != nil, r.Item != nil, r.Lesson != nil} {
		if set {
			n++
		}
	}
	return n
}
