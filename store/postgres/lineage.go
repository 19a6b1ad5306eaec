package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrCannotTellRestore is wrapped by Restored's error where the server
// does not let the role read the cluster's identity.
var ErrCannotTellRestore = errors.New("postgres: the role may not read the cluster's identity (pg_control_system, pg_control_checkpoint), so a restore cannot be told")

// Restored tells whether the database is a restored copy, and if so when
// a server first started on it after the restore: the statemachine's
// Config.RestoredAt. PostgreSQL names its cluster (the system identifier
// that initdb draws) and the timeline it writes (which every point-in-time
// recovery, and every promotion of a replica, moves on); each start
// records both, and a start that finds either changed takes the database
// for a restored one, recording its now as when. So a pg_dump loaded into
// another cluster, a backup recovered to a point in time, and a replica
// promoted after a failover (which may have lost the last commits) are
// all noticed; a copy of the data directory started as it was is not.
// The zero time: not restored, or not since this database was first
// started on.
//
// A server that does not let the role read the cluster's identity (some
// managed offerings) cannot tell: Restored returns ErrCannotTellRestore,
// and the caller decides whether to run without knowing.
func (s *Store) Restored(ctx context.Context, now time.Time) (time.Time, error) {
	var sysID string
	var timeline int64
	if err := s.pool.QueryRow(ctx, "SELECT (pg_control_system()).system_identifier::text, (pg_control_checkpoint()).timeline_id").Scan(&sysID, &timeline); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
			return time.Time{}, fmt.Errorf("%w: %s", ErrCannotTellRestore, pe.Message)
		}
		return time.Time{}, fmt.Errorf("postgres: reading the cluster's identity (pg_control_system, pg_control_checkpoint): %w", err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO sundial.lineage (system_id, timeline) VALUES ($1, $2)
		ON CONFLICT (one) DO UPDATE SET system_id = excluded.system_id, timeline = excluded.timeline, restored_at = $3
			WHERE lineage.system_id <> excluded.system_id OR lineage.timeline <> excluded.timeline`,
		sysID, timeline, now); err != nil {
		return time.Time{}, fmt.Errorf("postgres: recording the cluster's identity: %w", err)
	}
	var restored *time.Time
	if err := s.pool.QueryRow(ctx, "SELECT restored_at FROM sundial.lineage").Scan(&restored); err != nil {
		return time.Time{}, err
	}
	return fromNull(restored), nil
}
