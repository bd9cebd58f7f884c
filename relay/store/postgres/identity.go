package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ErrOtherIdentity: the database was first used by a relay with another
// key. Several instances are one relay only when they sign with one
// key: group state (39000–39003) signed by two keys reads as two relays'
// to every client, and each instance would refuse the other's.
var ErrOtherIdentity = errors.New("the shared database belongs to a relay with another key")

// ClaimIdentity records pubkey as the database's key called name (the
// relay's, the agent's) when none is recorded, and is ErrOtherIdentity
// when another is.
func (s *Store) ClaimIdentity(ctx context.Context, name, pubkey string) error {
	var have string
	var err error
	// twice: a first claim racing this one commits after this statement's
	// snapshot was taken, so neither half sees a row; the second try does
	for range 2 {
		err = s.pool.QueryRow(ctx, `WITH ins AS (
				INSERT INTO identity (name, pubkey) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING pubkey)
			SELECT pubkey FROM ins UNION ALL SELECT pubkey FROM identity WHERE name = $1 LIMIT 1`, name, pubkey).Scan(&have)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("reading the database's %s key: %w", name, err)
	}
	if have != pubkey {
		return fmt.Errorf("%w: its %s key is %s, this instance's is %s", ErrOtherIdentity, name, have, pubkey)
	}
	return nil
}
