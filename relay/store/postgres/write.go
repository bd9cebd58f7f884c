package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fiatjaf/eventstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nbd-wtf/go-nostr"
	"github.com/snowclaw/snowclaw"
	"github.com/snowclaw/snowclaw/relay/store"
)

// ErrUnstorable: the event holds text PostgreSQL cannot keep as it is (a
// NUL character or invalid UTF-8, which text and jsonb refuse). It is
// refused whole rather than stored altered.
var ErrUnstorable = snowclaw.Invalid("the event holds a NUL character or invalid UTF-8, which this relay's store cannot keep")

const insertEvent = `INSERT INTO events (id, pubkey, created_at, kind, tags, content, sig, tagvalues, addr)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// replaceClause makes insertEvent a replacement: the address's row takes
// the new version only if it is newer (NIP-01).
const replaceClause = ` ON CONFLICT (addr) DO UPDATE SET
	id = excluded.id, pubkey = excluded.pubkey, created_at = excluded.created_at,
	kind = excluded.kind, tags = excluded.tags, content = excluded.content,
	sig = excluded.sig, tagvalues = excluded.tagvalues
	WHERE excluded.created_at > events.created_at
	   OR (excluded.created_at = events.created_at AND excluded.id < events.id)`

// row is evt as the insert's parameters.
func row(evt *nostr.Event) ([]any, error) {
	if err := storable(evt); err != nil {
		return nil, err
	}
	tags := evt.Tags
	if tags == nil {
		tags = nostr.Tags{}
	}
	tagsJSON, err := json.Marshal(tags)
	if err != nil {
		return nil, err
	}
	var addr *string
	if nostr.IsReplaceableKind(evt.Kind) || nostr.IsAddressableKind(evt.Kind) {
		d := ""
		if nostr.IsAddressableKind(evt.Kind) {
			d = evt.Tags.GetD()
		}
		a := snowclaw.Address(evt.Kind, evt.PubKey, d)
		addr = &a
	}
	return []any{evt.ID, evt.PubKey, int64(evt.CreatedAt), evt.Kind, string(tagsJSON), evt.Content, evt.Sig, tagValues(evt), addr}, nil
}

// tagValues is the tagvalues column: name:value of each tag with a
// one-letter name and a value, the form where() asks for.
func tagValues(evt *nostr.Event) []string {
	out := []string{}
	for _, t := range evt.Tags {
		if len(t) >= 2 && len(t[0]) == 1 {
			out = append(out, t[0]+":"+t[1])
		}
	}
	return out
}

func storable(evt *nostr.Event) error {
	ok := func(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
	if !ok(evt.Content) || !ok(evt.ID) || !ok(evt.PubKey) || !ok(evt.Sig) {
		return ErrUnstorable
	}
	for _, t := range evt.Tags {
		for _, v := range t {
			if !ok(v) {
				return ErrUnstorable
			}
		}
	}
	return nil
}

// SaveEvent stores evt; eventstore.ErrDupEvent when it is stored already
// (or, for a replaceable kind, when its address holds a version: use
// ReplaceEvent to replace).
func (s *Store) SaveEvent(ctx context.Context, evt *nostr.Event) error {
	_, err := s.SaveSequenced(ctx, evt)
	return err
}

// SaveSequenced is store.Sequencer's: the position is the seq of the
// event's entry in the change log.
func (s *Store) SaveSequenced(ctx context.Context, evt *nostr.Event) (int64, error) {
	args, err := row(evt)
	if err != nil {
		return 0, err
	}
	var seq int64
	err = s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, insertEvent+" ON CONFLICT DO NOTHING", args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return eventstore.ErrDupEvent
		}
		seq, err = s.logChanges(ctx, tx, store.Saved, []*nostr.Event{evt})
		return err
	})
	return seq, err
}

// ReplaceEvent settles NIP-01 replacement in one statement of one
// transaction: evt takes its address's row only if it is newer (later
// created_at, or the same and a lower id); otherwise nothing changes and
// it returns store.ErrNotNewer. The address is a unique column, so two
// instances racing cannot both win: PostgreSQL makes the second insert
// wait for the first and then judges it against the row the first left.
func (s *Store) ReplaceEvent(ctx context.Context, evt *nostr.Event) error {
	args, err := row(evt)
	if err != nil {
		return err
	}
	if args[8] == nil || args[8].(*string) == nil {
		return s.SaveEvent(ctx, evt) // a regular kind has nothing to replace
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, insertEvent+replaceClause, args...)
		if isUniqueViolation(err) {
			// the id is stored under no address of its own (it cannot
			// be: the id covers kind and pubkey), or as a version
			return store.ErrNotNewer
		}
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotNewer
		}
		_, err = s.logChanges(ctx, tx, store.Saved, []*nostr.Event{evt})
		return err
	})
}

// DeleteEvent removes evt by id and logs what it removed; deleting an
// event that is not stored changes nothing and logs nothing.
func (s *Store) DeleteEvent(ctx context.Context, evt *nostr.Event) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "DELETE FROM events WHERE id = $1 RETURNING "+columns, evt.ID)
		if err != nil {
			return err
		}
		gone, err := pgx.CollectRows(rows, scanEvent)
		if err != nil || len(gone) == 0 {
			return err
		}
		_, err = s.logChanges(ctx, tx, store.Deleted, gone)
		return err
	})
}

// logChanges appends one entry per event, in order, in one statement,
// inside the change's transaction, notifies once with the last seq and
// returns it. A saved event's row takes its entry's seq as its position
// (store.Sequencer). Sequence numbers are drawn when the row is inserted
// but become visible at commit, and two transactions can commit in the
// other order: a follower that had read seq 8 would move past a 7
// committed after it and never see it. The advisory lock, held from here
// to the commit, makes appends take turns, so seq order is commit order.
// It is the last step before the commit, so the turn is short. The
// notification carries the seq; followers read the entries themselves (a
// notification can be lost, the log cannot).
func (s *Store) logChanges(ctx context.Context, tx pgx.Tx, op store.Op, evs []*nostr.Event) (int64, error) {
	bodies := make([]string, len(evs))
	for i, evt := range evs {
		b, err := json.Marshal(evt)
		if err != nil {
			return 0, err
		}
		bodies[i] = string(b)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockLog); err != nil {
		return 0, err
	}
	var seq int64
	err := tx.QueryRow(ctx, `WITH c AS (
			INSERT INTO changes (op, origin, event)
			SELECT $1, $2, u.e::jsonb FROM unnest($3::text[]) WITH ORDINALITY AS u(e, n) ORDER BY u.n
			RETURNING seq, event->>'id' AS id),
		positioned AS (
			UPDATE events SET seq = c.seq FROM c WHERE $1 = 1 AND events.id = c.id)
		SELECT max(seq), pg_notify('`+channel+`', max(seq)::text) FROM c`, int16(op), s.opts.Origin, bodies).Scan(&seq, nil)
	if err != nil {
		return 0, fmt.Errorf("writing the change log: %w", err)
	}
	return seq, nil
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
