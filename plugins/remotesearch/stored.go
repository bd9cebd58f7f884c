package remotesearch

import (
	"context"
	"slices"

	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
)

// storedHere drops from cands (by id) every remote version of an address
// this relay stores, the reader may read, and the remote version is not
// newer than: the local search did not return it (it ranked below the
// limit, or an extension left it out), but it is this relay's version and
// a stale copy elsewhere must not be served in its place. A stored
// version the reader may not read counts as absent, so what is dropped
// tells the reader nothing about what is stored here.
//
// One store query covers every candidate: the authors × d tags of the
// candidates, matched back to exact addresses.
func (l *Layer) storedHere(ctx context.Context, reader string, addrs map[string]*nostr.Event) ([]string, error) {
	if len(addrs) == 0 {
		return nil, nil
	}
	var authors, ds []string
	for _, evt := range addrs {
		authors = append(authors, evt.PubKey)
		ds = append(ds, evt.Tags.GetD())
	}
	slices.Sort(authors)
	slices.Sort(ds)
	f := nostr.Filter{Kinds: []int{snowclaw.KindAppData}, Authors: slices.Compact(authors), Tags: nostr.TagMap{"d": slices.Compact(ds)}}
	var drop []string
	err := l.o.Stored(ctx, f, func(local *nostr.Event) bool {
		addr := snowclaw.Address(local.Kind, local.PubKey, local.Tags.GetD())
		remote, ok := addrs[addr]
		if ok && remote.CreatedAt <= local.CreatedAt && l.o.CanRead(reader, local) {
			drop = append(drop, remote.ID)
		}
		return true
	})
	return drop, err
}
