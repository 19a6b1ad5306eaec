package postgres

import (
	"context"
	"time"
)

// TakeTurn reports whether this instance runs the pass called name in the
// period of length every that holds now (periods count from the Unix
// epoch): the first instance to ask in a period takes it, and the others
// asking in it are told no. So a pass that every instance asks to run once
// a minute runs once a minute across the fleet, whichever instances are
// up, and a pass cut short by an instance's death runs again in the next
// period, on whichever instance asks first.
func (s *Store) TakeTurn(ctx context.Context, name string, now time.Time, every time.Duration) (bool, error) {
	period := now.UnixNano() / int64(every)
	start := time.Unix(0, period*int64(every))
	ct, err := s.pool.Exec(ctx, `INSERT INTO sundial.passes (name, next) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET next = excluded.next WHERE passes.next < excluded.next`,
		name, start.Add(every))
	if err != nil {
		return false, err
	}
	return ct.RowsAffected() == 1, nil
}
