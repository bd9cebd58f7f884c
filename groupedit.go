package snowclaw

import (
	"fmt"
	"slices"

	"github.com/nbd-wtf/go-nostr"
)

// The NIP-29 group-metadata tags: basic display fields, the flags (each
// with the opposite older clients send), the subgroup links.
const (
	TagGroupName    = "name"
	TagGroupPicture = "picture"
	TagGroupBanner  = "banner"
	TagGroupAbout   = "about"
	TagGroupParent  = "parent"
	TagGroupChild   = "child"
	// TagPrevious carries timeline references: the first 8 hex
	// characters of events the author saw in the group.
	TagPrevious = "previous"
	// TagEncrypted / TagUnencrypted are this relay's own flag (not
	// NIP-29's): the group's memories are sealed with its group key.
	TagEncrypted   = "encrypted"
	TagUnencrypted = "unencrypted"
)

// GroupBasicFields are the display fields of a group, in the order the
// relay renders them.
var GroupBasicFields = []string{TagGroupName, TagGroupPicture, TagGroupBanner, TagGroupAbout}

// groupFlagTags pairs each NIP-29 flag with its opposite. The current
// NIP has only the flags (an absent one is off); the opposites are older
// clients' spelling of "off", which this relay still writes (public,
// open) because NDK and 0xchat read them.
var groupFlagTags = [...][2]string{
	{"private", "public"},
	{"restricted", "unrestricted"},
	{"hidden", "visible"},
	{"closed", "open"},
}

// GroupFlags are the four NIP-29 flags of a group.
type GroupFlags struct {
	Private    bool // only members read
	Restricted bool // only members write
	Hidden     bool // metadata only for members
	Closed     bool // joins need an invite code
}

// Tags are the flags as a 39000 states them: each flag that is on, and
// for private and closed the opposite when off (older clients read
// "public" and "open").
func (f GroupFlags) Tags() nostr.Tags {
	var out nostr.Tags
	for i, on := range f.list() {
		switch {
		case on:
			out = append(out, nostr.Tag{groupFlagTags[i][0]})
		case i == 0 || i == 3:
			out = append(out, nostr.Tag{groupFlagTags[i][1]})
		}
	}
	return out
}

func (f GroupFlags) list() [4]bool { return [4]bool{f.Private, f.Restricted, f.Hidden, f.Closed} }

func (f *GroupFlags) set(i int, on bool) {
	switch i {
	case 0:
		f.Private = on
	case 1:
		f.Restricted = on
	case 2:
		f.Hidden = on
	case 3:
		f.Closed = on
	}
}

// GroupEdit is what a create-group (9007) or edit-metadata (9002) says
// of a group's metadata, read once.
//
// NIP-29 has a 9002 carry "all the fields of group-metadata", where a
// flag's absence means its opposite. Clients written against older
// relays send a rename alone, with no flag at all (NDK's setMetadata);
// read as the NIP says, that rename would make a private, closed group
// public and open. So an edit that names any flag or opposite states
// every flag (Flags is set; an absent basic field is cleared), and an
// edit that names none changes only the basic fields it names.
//
// welshman (Flotilla) builds an edit from the flags the admin set and
// then copies back every other tag of the 39000 it read: its d tag, and
// the relay's "public" and "open" among them. So an edit carrying a d tag
// is a whole copy of the metadata and states every flag too (an admin
// switching every flag off sends no flag at all), and a flag beside its
// own opposite is on: the edit that makes a public room private carries
// "private" and "public". The flag is the NIP's word; the opposite is a
// leftover.
type GroupEdit struct {
	// Basic are the basic fields the edit names (GroupBasicFields).
	Basic map[string]string
	// Flags is nil for an edit that names no NIP-29 flag.
	Flags *GroupFlags
	// Named are the flags the event names, by their NIP-29 name (private,
	// restricted, hidden, closed), each on or off: what a create-group
	// says, whose other flags take the relay's defaults.
	Named map[string]bool
	// Encrypted is this relay's flag when named; an edit that does not
	// name it leaves it alone, since clients that know only NIP-29
	// would otherwise switch encryption off by omission.
	Encrypted *bool
	// Parent is the parent group ("" for a root): every 9002 states it
	// (NIP-29: "Absence of the parent tag makes the group a root").
	Parent string
	// Children are the child tags in order; nil when there are none.
	Children []string
	// StatesTree: the edit states the group's place among subgroups
	// (it names a flag, a parent or a child). One that does not — a
	// rename from a client that knows nothing of subgroups — leaves the
	// parent and the children as they are.
	StatesTree bool
}

// ReadGroupEdit reads the metadata fields of a 9007 or 9002. An edit that
// names both encrypted and unencrypted (this relay's own flag, which no
// client copies back), more than one parent or a child twice is an
// error, with the edit as far as it could be read (a stored event is
// applied as far as it reads).
func ReadGroupEdit(tags nostr.Tags) (GroupEdit, error) {
	e := GroupEdit{Basic: make(map[string]string), Named: make(map[string]bool)}
	var named [4][2]bool
	var encrypted [2]bool
	var err error
	fail := func(format string, args ...any) {
		if err == nil {
			err = fmt.Errorf(format, args...)
		}
	}
	parents := 0
	copied := false
	for _, t := range tags {
		if len(t) == 0 {
			continue
		}
		val := ""
		if len(t) >= 2 {
			val = t[1]
		}
		switch t[0] {
		case TagGroupName, TagGroupPicture, TagGroupBanner, TagGroupAbout:
			e.Basic[t[0]] = val
		case "d":
			copied = true
		case TagEncrypted:
			encrypted[0] = true
		case TagUnencrypted:
			encrypted[1] = true
		case TagGroupParent:
			e.StatesTree = true
			parents++
			if parents > 1 {
				fail("an edit names one parent at most")
				continue
			}
			if val == "" {
				fail("a parent tag names the parent group; leave it out to make a root group")
			}
			e.Parent = val
		case TagGroupChild:
			e.StatesTree = true
			if slices.Contains(e.Children, val) {
				fail("child %q is named twice", val)
				continue
			}
			e.Children = append(e.Children, val)
		default:
			for i, pair := range groupFlagTags {
				for j, name := range pair {
					if t[0] == name {
						named[i][j] = true
					}
				}
			}
		}
	}
	if copied {
		e.Flags = &GroupFlags{}
	}
	for i, n := range named {
		if n[0] || n[1] {
			if e.Flags == nil {
				e.Flags = &GroupFlags{}
			}
			e.Flags.set(i, n[0])
			e.Named[groupFlagTags[i][0]] = n[0]
		}
	}
	if e.Flags != nil {
		e.StatesTree = true
	}
	if e.Flags != nil {
		for _, f := range GroupBasicFields {
			if _, ok := e.Basic[f]; !ok {
				e.Basic[f] = ""
			}
		}
	}
	switch {
	case encrypted[0] && encrypted[1]:
		fail("the edit says both %q and %q", TagEncrypted, TagUnencrypted)
	case encrypted[0] || encrypted[1]:
		on := encrypted[0]
		e.Encrypted = &on
	}
	return e, err
}
