package postgres

import (
	"context"
	"time"
)

// StoreTime is the database's clock (clock.Source): the one clock of
// every instance sharing it. clock_timestamp, not now(): now() is the
// start of the transaction.
func (s *Store) StoreTime(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&t)
	return t, err
}
