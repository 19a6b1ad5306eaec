package postgres

import (
	"context"
	"time"
)

// Revocations are the sign-in's ended sessions and spent states
// (signin.Revocations), kept in the database so that every instance
// refuses them, across restarts.
type Revocations struct {
	s   *Store
	now func() time.Time
}

// NewRevocations returns the store's Revocations, on the clock now.
func (s *Store) NewRevocations(now func() time.Time) *Revocations {
	return &Revocations{s: s, now: now}
}

// Revoke adds id until the given time, and drops entries past theirs.
func (r *Revocations) Revoke(ctx context.Context, id string, until time.Time) error {
	_, err := r.s.pool.Exec(ctx, `WITH gone AS (DELETE FROM sundial.revocations WHERE expires <= $3 AND id <> $1)
		INSERT INTO sundial.revocations (id, expires) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET expires = greatest(revocations.expires, excluded.expires)`, id, until, r.now())
	return err
}

// Revoked reports whether id is revoked and not expired.
func (r *Revocations) Revoked(ctx context.Context, id string) (bool, error) {
	var revoked bool
	err := r.s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM sundial.revocations WHERE id = $1 AND expires > $2)", id, r.now()).Scan(&revoked)
	return revoked, err
}
