package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Instance is one server running on the database, as it announced itself
// (Announce).
type Instance struct {
	ID      string // its name in the task rows' claims
	Host    string
	PID     int
	Version string
	Started time.Time
	// Seen is when it last announced itself: every minute while it runs.
	Seen time.Time
	// Settings are digests of the groups of settings every instance must
	// be given alike, by group.
	Settings map[string]string
}

// A running instance announces itself every AnnounceEvery; one silent for
// StoppedAfter, three announcements, is taken as stopped.
const (
	AnnounceEvery = time.Minute
	StoppedAfter  = 3 * AnnounceEvery
)

// Stopped instances stay listed for ForgetInstancesAfter, long enough to
// see which stopped and when, but at most the KeepStoppedInstances seen
// last: an instance that restarts every few seconds (a crash loop) is a
// new one each time, and would otherwise list thousands in a day.
const (
	ForgetInstancesAfter = 24 * time.Hour
	KeepStoppedInstances = 100
)

// Announce records in as running, seen at in.Seen, and forgets the
// instances stopped before that for ForgetInstancesAfter, and those
// beyond the KeepStoppedInstances stopped last.
func (s *Store) Announce(ctx context.Context, in Instance) error {
	_, err := s.pool.Exec(ctx, `WITH gone AS (DELETE FROM sundial.instances WHERE id <> $1 AND (seen < $8 OR id IN (
			SELECT id FROM sundial.instances WHERE seen < $9 AND id <> $1 ORDER BY seen DESC, id OFFSET $10)))
		INSERT INTO sundial.instances (id, host, pid, version, started, seen, settings) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, version = excluded.version,
			started = excluded.started, seen = greatest(instances.seen, excluded.seen), settings = excluded.settings`,
		in.ID, in.Host, in.PID, in.Version, in.Started, in.Seen, in.Settings,
		in.Seen.Add(-ForgetInstancesAfter), in.Seen.Add(-StoppedAfter), KeepStoppedInstances)
	return err
}

// Instances lists the instances announced, the most recently started
// first.
func (s *Store) Instances(ctx context.Context) ([]Instance, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, host, pid, version, started, seen, settings FROM sundial.instances ORDER BY started DESC, id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Instance, error) {
		var in Instance
		err := row.Scan(&in.ID, &in.Host, &in.PID, &in.Version, &in.Started, &in.Seen, &in.Settings)
		in.Started, in.Seen = in.Started.UTC(), in.Seen.UTC()
		return in, err
	})
}
