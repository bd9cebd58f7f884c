package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

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
	sig = excluded.sig, tagvalues = excluded.tagvalues, seq = excluded.seq
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
	return []any{evt.ID, evt.PubKey, int64(evt.CreatedAt), evt.Kind, string(tagsJSON), evt.Content, evt.Sig, tagValues(evt), address(evt)}, nil
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

// nextSeq draws an entry's seq from the change log's sequence. It is
// only ever evaluated by a statement that inserts into changes, so the
// transaction holds its lock on changes from before it draws until it
// ends: a follower proves a missing seq will never be committed by
// waiting out the transactions that hold that lock (feed.go).
const nextSeq = `nextval('changes_seq_seq')`

// SaveEvent stores evt; eventstore.ErrDupEvent when it is stored already
// (or, for a replaceable kind, when its address holds a version: use
// ReplaceEvent to replace).
func (s *Store) SaveEvent(ctx context.Context, evt *nostr.Event) error {
	_, err := s.SaveSequenced(ctx, evt)
	return err
}

// SaveSequenced is store.Sequencer's: the position is the seq of the
// event's entry in the change log. Concurrent saves share one statement
// and one commit (commit.go); the answer comes after that commit. With a
// position from store.WithDecidedAt it stores nothing, and returns
// store.ErrStale, when the log holds another instance's decisive change
// after it (store.ErrStale).
func (s *Store) SaveSequenced(ctx context.Context, evt *nostr.Event) (int64, error) {
	el, err := element(evt)
	if err != nil {
		return 0, err
	}
	pos, ok := store.DecidedAt(ctx)
	if !ok {
		pos = -1
	}
	return s.commits.save(ctx, evt.ID, el, pos)
}

// element is evt as one element of a batch's JSON array: the event's own
// fields (what the change log keeps) plus tv (its tagvalues) and addr.
func element(evt *nostr.Event) ([]byte, error) {
	if err := storable(evt); err != nil {
		return nil, err
	}
	if evt.Kind < math.MinInt32 || evt.Kind > math.MaxInt32 {
		return nil, errKind
	}
	b, err := evt.MarshalJSON()
	if err != nil {
		return nil, err
	}
	tv, err := json.Marshal(tagValues(evt))
	if err != nil {
		return nil, err
	}
	b = append(append(b[:len(b)-1], `,"tv":`...), tv...)
	if a := address(evt); a != nil {
		q, _ := json.Marshal(*a)
		b = append(append(b, `,"addr":`...), q...)
	}
	return append(b, '}'), nil
}

// errKind: the kind does not fit the kind column (an integer).
var errKind = snowclaw.Invalid("the event's kind is out of range")

// address is the addr column: kind:pubkey:d of a replaceable or
// addressable event, nil otherwise.
func address(evt *nostr.Event) *string {
	if !nostr.IsReplaceableKind(evt.Kind) && !nostr.IsAddressableKind(evt.Kind) {
		return nil
	}
	d := ""
	if nostr.IsAddressableKind(evt.Kind) {
		d = evt.Tags.GetD()
	}
	a := snowclaw.Address(evt.Kind, evt.PubKey, d)
	return &a
}

// replaceEvent is ReplaceEvent's one statement: the row and its change
// log entry in one implicit transaction (one round trip, one commit). The
// seq is drawn before PostgreSQL knows whether the version wins, so a
// losing one logs it as unused (op 3): readers need not wait to learn it
// will never hold anything.
const replaceEvent = `WITH s AS MATERIALIZED (SELECT ` + nextSeq + ` AS seq),
	ins AS (
		INSERT INTO events (id, pubkey, created_at, kind, tags, content, sig, tagvalues, addr, seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, (SELECT seq FROM s))` + replaceClause + `
		RETURNING seq),
	logged AS (
		INSERT INTO changes (seq, op, origin, id, kind, event)
		SELECT s.seq, CASE WHEN ins.seq IS NULL THEN 3 ELSE 1 END, $10,
			CASE WHEN ins.seq IS NOT NULL THEN $1 END, CASE WHEN ins.seq IS NOT NULL THEN $4::integer END,
			CASE WHEN ins.seq IS NOT NULL THEN $11::jsonb END
		FROM s LEFT JOIN ins ON true)
	SELECT s.seq, ins.seq IS NOT NULL FROM s LEFT JOIN ins ON true`

// ReplaceEvent settles NIP-01 replacement in one statement: evt takes its
// address's row only if it is newer (later created_at, or the same and a
// lower id); otherwise nothing changes and it returns store.ErrNotNewer.
// The address is a unique column, so two instances racing cannot both
// win: PostgreSQL makes the second insert wait for the first and then
// judges it against the row the first left.
func (s *Store) ReplaceEvent(ctx context.Context, evt *nostr.Event) error {
	args, err := row(evt)
	if err != nil {
		return err
	}
	if args[8] == nil || args[8].(*string) == nil {
		return s.SaveEvent(ctx, evt) // a regular kind has nothing to replace
	}
	body, err := entryBody(evt)
	if err != nil {
		return err
	}
	var seq int64
	var won bool
	err = s.pool.QueryRow(ctx, replaceEvent, append(args, s.opts.Origin, body)...).Scan(&seq, &won)
	switch {
	case isUniqueViolation(err):
		// the id is stored under no address of its own (it cannot be:
		// the id covers kind and pubkey), or as a version
		return store.ErrNotNewer
	case err != nil:
		return err
	case !won:
		s.committed(store.Unused, seq)
		return store.ErrNotNewer
	}
	s.committed(store.Saved, seq)
	return nil
}

// deleteEvent is DeleteEvent's one statement; the entry's seq is drawn
// only for a row the DELETE removed.
const deleteEvent = `WITH gone AS (
		DELETE FROM events WHERE id = $1 RETURNING ` + columns + `)
	INSERT INTO changes (op, origin, id, kind, event)
	SELECT 2, $2, id, kind, jsonb_build_object('id', id, 'pubkey', pubkey, 'created_at', created_at,
		'kind', kind, 'tags', tags, 'content', content, 'sig', sig) FROM gone
	RETURNING seq`

// DeleteEvent removes evt by id and logs what it removed; deleting an
// event that is not stored changes nothing and logs nothing.
func (s *Store) DeleteEvent(ctx context.Context, evt *nostr.Event) error {
	var seq int64
	err := s.pool.QueryRow(ctx, deleteEvent, evt.ID, s.opts.Origin).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	s.committed(store.Deleted, seq)
	return nil
}

// logSaves appends one saved event's entry per event, in order, in one
// statement, inside tx, and returns the entries' seqs. A saved event's row takes its
// entry's seq as its position (store.Sequencer). The caller reports the
// seqs once tx has committed (Store.committed).
func (s *Store) logSaves(ctx context.Context, tx pgx.Tx, evs []*nostr.Event) ([]int64, error) {
	ids := make([]string, len(evs))
	kinds := make([]int32, len(evs))
	bodies := make([]*string, len(evs))
	for i, evt := range evs {
		ids[i], kinds[i] = evt.ID, int32(evt.Kind)
		var err error
		if bodies[i], err = entryBody(evt); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, `WITH c AS (
			INSERT INTO changes (op, origin, id, kind, event)
			SELECT 1, $1, u.id, u.kind, u.e::jsonb
			FROM unnest($2::text[], $3::integer[], $4::text[]) WITH ORDINALITY AS u(id, kind, e, n) ORDER BY u.n
			RETURNING seq, id),
		positioned AS (
			UPDATE events SET seq = c.seq FROM c WHERE events.id = c.id)
		SELECT seq FROM c`, s.opts.Origin, ids, kinds, bodies)
	if err != nil {
		return nil, fmt.Errorf("writing the change log: %w", err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("writing the change log: %w", err)
	}
	return seqs, nil
}

// entryBody is what a saved event's change log entry repeats of it: the
// whole event for a decisive kind, nothing (SQL NULL) for the rest,
// whose readers take it from events (schema step 6).
func entryBody(evt *nostr.Event) (*string, error) {
	if !snowclaw.IsDecisiveKind(evt.Kind) {
		return nil, nil
	}
	b, err := evt.MarshalJSON()
	if err != nil {
		return nil, err
	}
	body := string(b)
	return &body, nil
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
