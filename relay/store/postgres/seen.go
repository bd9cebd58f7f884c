package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// UseOnce records that the one-time token id (a NIP-98 authorization
// event's id) was used, valid until `until`, and reports false when it
// was already used and is still valid: one INSERT settles it for every
// instance at once, so a captured Authorization header cannot be replayed
// against another instance behind the same load balancer. Expired rows
// are removed as new ones arrive, a few at a time.
func (s *Store) UseOnce(ctx context.Context, id string, until time.Time) (bool, error) {
	var fresh bool
	err := s.pool.QueryRow(ctx, `WITH swept AS (
			DELETE FROM used_once WHERE id IN (SELECT id FROM used_once WHERE until < now() LIMIT 16)
		)
		INSERT INTO used_once (id, until) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET until = excluded.until WHERE used_once.until < now()
		RETURNING true`, id, until).Scan(&fresh)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // there, and still valid: no row written
	}
	return fresh, err
}
