package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema, one step per version: migrations[i] takes
// the database from version i to i+1. A released step is never edited;
// a change is a new step.
var migrations = []string{
	// 1: events and the change log.
	`CREATE TABLE events (
		id         text PRIMARY KEY,
		pubkey     text NOT NULL,
		created_at bigint NOT NULL,
		kind       integer NOT NULL,
		tags       jsonb NOT NULL,
		content    text NOT NULL,
		sig        text NOT NULL,
		-- name:value of every tag whose name is one letter (what NIP-01
		-- filters index): exact, so h:x never matches ["p","x"]
		tagvalues  text[] NOT NULL,
		-- kind:pubkey:d of a replaceable or addressable event, NULL
		-- otherwise: one version per address, whoever races
		addr       text UNIQUE
	);
	CREATE INDEX events_time ON events (created_at DESC, id DESC);
	CREATE INDEX events_kind ON events (kind, created_at DESC, id DESC);
	CREATE INDEX events_pubkey ON events (pubkey, created_at DESC, id DESC);
	CREATE INDEX events_tagvalues ON events USING gin (tagvalues);
	CREATE TABLE changes (
		seq    bigserial PRIMARY KEY,
		op     smallint NOT NULL,
		origin text NOT NULL,
		event  jsonb NOT NULL,
		at     timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX changes_at ON changes (at);
	-- the newest seq pruning removed: a follower behind it is truncated
	CREATE TABLE changes_pruned (
		one     boolean PRIMARY KEY DEFAULT true CHECK (one),
		through bigint NOT NULL
	);
	INSERT INTO changes_pruned VALUES (true, 0);`,
	// 2: journals (journal.go): the erasure list and the audit trail,
	// shared by every instance.
	`CREATE TABLE journal (
		seq    bigserial PRIMARY KEY,
		name   text NOT NULL,
		origin text NOT NULL,
		line   bytea NOT NULL,
		at     timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX journal_name ON journal (name, seq);`,
	// 3: one-time tokens (seen.go): NIP-98 authorizations already used.
	`CREATE TABLE used_once (
		id    text PRIMARY KEY,
		until timestamptz NOT NULL
	);
	CREATE INDEX used_once_until ON used_once (until);`,
	// 4: every event's position in the store's order (its change's seq,
	// store.Sequencer), kept past the change log's pruning: state that
	// several instances change is derived in that order. Rows stored
	// before keep the seq of their change if the log still has it.
	// And the relay's identity: every instance of one relay signs with
	// one key (identity.go).
	`ALTER TABLE events ADD COLUMN seq bigint;
	UPDATE events e SET seq = c.seq
		FROM (SELECT event->>'id' AS id, max(seq) AS seq FROM changes WHERE op = 1 GROUP BY 1) c
		WHERE e.id = c.id;
	CREATE TABLE identity (
		name   text PRIMARY KEY,
		pubkey text NOT NULL,
		at     timestamptz NOT NULL DEFAULT now()
	);`,
	// 5: writers no longer take turns appending to the change log
	// (feed.go): an entry may commit after one with a higher seq, and a
	// seq a write drew but did not use is logged as op 3 (store.Unused)
	// without an event. A binary older than this waits for no late
	// entry, so it must not run against this schema.
	`ALTER TABLE changes ALTER COLUMN event DROP NOT NULL;`,
	// 6: a saved event's entry names it (id, kind) instead of repeating
	// it, unless its kind is decisive (snowclaw.IsDecisiveKind): readers
	// take the body from events, where it is already stored. A decisive
	// entry and a deletion keep their body, because a reader must apply
	// them even when the event is gone by the time it reads. Entries
	// written before keep their body and no id or kind.
	`ALTER TABLE changes ADD COLUMN id text, ADD COLUMN kind integer;`,
}

// Advisory lock keys (arbitrary constants, one per purpose).
const (
	lockSchema  int64 = 0x736e6f77_00000001 // migrations
	_           int64 = 0x736e6f77_00000002 // change-log appends, until schema 5
	lockJournal int64 = 0x736e6f77_00000003 // journal appends
)

// ErrSchemaTooNew: the database was migrated by a newer snowclaw.
var ErrSchemaTooNew = errors.New("the database's schema is newer than this snowclaw")

// SchemaVersion is the version this binary migrates to.
func SchemaVersion() int { return len(migrations) }

// migrate brings the schema to SchemaVersion in one transaction, under an
// advisory lock so that instances starting together take turns (the
// second finds the work done).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockSchema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS snowclaw_schema (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("creating snowclaw_schema: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM snowclaw_schema").Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("%w: it is at version %d, this binary knows up to %d; upgrade snowclaw (or point it at another database)", ErrSchemaTooNew, have, len(migrations))
		}
		for v := have; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO snowclaw_schema (version) VALUES ($1)", v+1); err != nil {
				return err
			}
		}
		return nil
	})
}
