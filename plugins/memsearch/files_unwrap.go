package memsearch

import "github.com/fiatjaf/eventstore"

// Unwrap is the store under the overlay. Internal jobs that read whole
// result sets (relay/store: the catch-up at start, reindex) page the store
// itself, by cursor; the virtual file chunks only ever answer ids queries.
func (s fileOverlay) Unwrap() eventstore.Store { return s.Store }
