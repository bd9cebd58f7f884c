package postgres

import "github.com/nbd-wtf/go-nostr"

// SetReadHook has fn called after every read of the log by a follower of
// s, with the newest seq the read saw and the follower's position after
// it. Set it before following.
func SetReadHook(s *Store, fn func(seen, cursor int64)) { s.readHook = fn }

// SaveBatchSQL is the statement a group commit runs, for tests that hold
// one open in a transaction of their own.
const SaveBatchSQL = saveBatch

// Element is evt as one element of SaveBatchSQL's array.
func Element(evt *nostr.Event) ([]byte, error) { return element(evt) }
