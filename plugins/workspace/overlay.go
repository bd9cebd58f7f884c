package workspace

import (
	"context"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
)

// Store is the index's view of the event store (inner): the stored events
// plus the file chunks as virtual events, which an ids query returns like
// stored ones (the index loads its hits so). Everything else goes to
// inner.
func (f *Files) Store(inner eventstore.Store) eventstore.Store {
	return overlay{Store: inner, files: f}
}

type overlay struct {
	eventstore.Store
	files *Files
}

func (s overlay) QueryEvents(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	if len(f.IDs) == 0 {
		return s.Store.QueryEvents(ctx, f)
	}
	var stored []string
	var virtual []*nostr.Event
	for _, id := range f.IDs {
		if evt, ok := s.files.event(id); ok {
			if f.Matches(evt) {
				virtual = append(virtual, evt)
			}
		} else {
			stored = append(stored, id)
		}
	}
	if len(virtual) == 0 {
		return s.Store.QueryEvents(ctx, f)
	}
	var ch chan *nostr.Event
	if len(stored) > 0 {
		sf := f
		sf.IDs = stored
		var err error
		if ch, err = s.Store.QueryEvents(ctx, sf); err != nil {
			return nil, err
		}
	}
	out := make(chan *nostr.Event)
	go func() {
		defer close(out)
		if ch != nil {
			for evt := range ch {
				select {
				case out <- evt:
				case <-ctx.Done():
					for range ch {
					}
					return
				}
			}
		}
		for _, evt := range virtual {
			select {
			case out <- evt:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// Unwrap is the store under the overlay. Internal jobs that read whole
// result sets (relay/store: the catch-up at start, reindex) page the store
// itself, by cursor; the virtual file chunks only ever answer ids queries.
func (s overlay) Unwrap() eventstore.Store { return s.Store }
