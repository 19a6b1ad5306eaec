package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// This file is the task queue's side of the store, for task/local's
// dispatchers, one per instance: taskrows.Rows. Claims lock the rows they
// take with FOR UPDATE SKIP LOCKED, so that instances claiming at once
// take different tasks and never wait for one another. Times are
// arguments: nothing here reads a clock, and the instances' clocks must
// agree, as they must anyway for their launches to be on time.

// adoptionSlot holds the Store's adoption.
type adoptionSlot struct {
	p atomic.Pointer[taskrows.Adoption]
}

func (a *adoptionSlot) load() *taskrows.Adoption { return a.p.Load() }

// Adopt sets the Store's adoption to a, replacing any; nil stops adopting.
func (s *Store) Adopt(a *taskrows.Adoption) { s.adoption.p.Store(a) }

const taskColumns = "name, job_id, kind, nonce, eta, invocation, attempt, failures"

func scanTask(row scanner) (taskrows.Claimed, error) {
	var c taskrows.Claimed
	var name, kind string
	var eta int64
	if err := row.Scan(&name, &c.JobID, &kind, &c.Nonce, &eta, &c.Invocation, &c.Attempt, &c.Failures); err != nil {
		return taskrows.Claimed{}, err
	}
	c.Kind = task.Kind(kind)
	c.ETA = fromETA(eta)
	return c, nil
}

// beatQuery records an owner's heartbeat ($1, $2): a late heartbeat with
// an older time must not make a live owner look older than it is.
const beatQuery = `INSERT INTO sundial.owners (owner, heartbeat) VALUES ($1, $2)
	ON CONFLICT (owner) DO UPDATE SET heartbeat = greatest(owners.heartbeat, excluded.heartbeat)`

// Orphans are found owner by owner, never task by task: an instance holds
// thousands of tasks claimed ahead, and claims run several times a
// second. held is the distinct owners holding tasks, read from the index
// of claimed tasks by a loose index scan (one probe an owner, jumping to
// the next: PostgreSQL 15 has no skip scan), ending in a NULL. They come
// from the tasks and not from sundial.owners, where an owner forgotten
// (ForgetOwner, or silent for OrphanAfter) has no row: its tasks are free
// at once. suspects is those not among the owners known alive ($1), each
// with its heartbeat, NULL if it has no row.
const suspectsCTE = `held(owner) AS (
		(SELECT owner FROM sundial.tasks WHERE owner IS NOT NULL ORDER BY owner LIMIT 1)
		UNION ALL
		SELECT (SELECT t.owner FROM sundial.tasks t WHERE t.owner > h.owner ORDER BY t.owner LIMIT 1)
		FROM held h WHERE h.owner IS NOT NULL
	), suspects AS (
		SELECT h.owner, o.heartbeat FROM held h LEFT JOIN sundial.owners o ON o.owner = h.owner
		WHERE h.owner IS NOT NULL AND h.owner <> ALL($1::text[])
	)`

// claimQueryWith is the claim: for $5 up to $2 tasks due by $3, earliest
// first: the free ones from tasks_free, and the orphans of the suspects,
// each owner's one index range: all those due of an owner dead at $4 (no
// heartbeat after $6, or no row) from tasks_claimed, and those of a live
// one whose lease ended by $4 from tasks_leased (their ETA is before that
// end, hence due). Each is locked, skipping what another claim locked. An
// owner's part is a subquery of its own, locked there: as a plain join
// PostgreSQL may rather read every claimed task by ETA and merge; and the
// lock, finding a row another claim took over meanwhile (READ COMMITTED),
// checks its new owner against this owner, not against any suspect. A
// task is held from $4 or its ETA, whichever is later, for $7. A claim of
// any task records $5's heartbeat at $4 and forgets the owners silent
// since $6, as Heartbeat does, in the same statement. recoveredCTE and
// recoveredPart add the tasks of claimRecoverQuery.
func claimQueryWith(recoveredCTE, recoveredPart string) string {
	return `WITH RECURSIVE ` + suspectsCTE + recoveredCTE + `, free AS (
		SELECT name, eta FROM sundial.tasks WHERE owner IS NULL AND eta <= $3 ORDER BY eta LIMIT $2 FOR UPDATE SKIP LOCKED
	), dead AS (
		SELECT x.* FROM suspects s CROSS JOIN LATERAL (
			SELECT t.name, t.eta FROM sundial.tasks t WHERE t.owner = s.owner AND t.eta <= $3
			ORDER BY t.eta LIMIT $2 FOR UPDATE SKIP LOCKED) x
		WHERE s.heartbeat IS NULL OR s.heartbeat <= $6
	), lapsed AS (
		SELECT x.* FROM suspects s CROSS JOIN LATERAL (
			SELECT t.name, t.eta FROM sundial.tasks t WHERE t.owner = s.owner AND t.lease_until <= $4 AND t.eta <= $3
			ORDER BY t.eta LIMIT $2 FOR UPDATE SKIP LOCKED) x
		WHERE s.heartbeat > $6
	), picked AS (
		SELECT name FROM (SELECT * FROM free UNION ALL SELECT * FROM dead UNION ALL SELECT * FROM lapsed` + recoveredPart + `) c ORDER BY eta LIMIT $2
	), claimed AS (
		UPDATE sundial.tasks t SET owner = $5, lease_until = greatest(t.eta, $4) + $7
		FROM picked WHERE t.name = picked.name
		RETURNING ` + "t.name, t.job_id, t.kind, t.nonce, t.eta, t.invocation, t.attempt, t.failures" + `
	), beat AS (
		INSERT INTO sundial.owners (owner, heartbeat) SELECT $5, $4 WHERE EXISTS (SELECT 1 FROM claimed)
		ON CONFLICT (owner) DO UPDATE SET heartbeat = greatest(owners.heartbeat, excluded.heartbeat)
	), forgotten AS (
		-- Not $5's row, which beat may be updating: one statement must
		-- not change a row twice.
		DELETE FROM sundial.owners WHERE heartbeat <= $6 AND owner <> $5 AND EXISTS (SELECT 1 FROM claimed)
	)
	SELECT * FROM claimed`
}

// claimRecoverQuery is claimQuery that also claims again $5's own tasks
// written claimed at one of the clock readings $8 (taskrows.Claim.Recover):
// their lease is greatest(eta, reading) + $7. Those whose lease has ended
// are among the lapsed already.
var (
	claimQuery        = claimQueryWith("", "")
	claimRecoverQuery = claimQueryWith(`, recovered AS (
		SELECT t.name, t.eta FROM sundial.tasks t
		WHERE t.owner = $5 AND t.eta <= $3 AND t.lease_until > $4
			AND t.lease_until IN (SELECT greatest(t.eta, r) + $7 FROM unnest($8::bigint[]) r)
		ORDER BY t.eta LIMIT $2 FOR UPDATE SKIP LOCKED
	)`, " UNION ALL SELECT * FROM recovered")
)

// nextDueQuery is when a task can next be claimed ($1: the owners known
// alive, $2: OrphanAfter): the earliest free one, or a held one's ETA, or
// later the end of its lease or of its owner's heartbeat, assuming the
// owner stops now. A task is free at greatest(eta, least(lease_until,
// heartbeat + $2)); as every claimed task's lease ends at or after its
// ETA (a claim holds it from its ETA or later, an adoption takes only
// tasks already due), that is least(lease_until, greatest(eta, heartbeat
// + $2)), whose minimum over an owner's tasks is least(their earliest
// lease end, greatest(their earliest ETA, heartbeat + $2)): two probes an
// owner, of tasks_leased and tasks_claimed. An owner with no row: its
// earliest ETA.
const nextDueQuery = `WITH RECURSIVE ` + suspectsCTE + `
	SELECT min(at) FROM (
		(SELECT eta AS at FROM sundial.tasks WHERE owner IS NULL ORDER BY eta LIMIT 1)
		UNION ALL
		SELECT CASE WHEN s.heartbeat IS NULL THEN e.eta ELSE least(l.lease_until, greatest(e.eta, s.heartbeat + $2)) END
		FROM suspects s
		CROSS JOIN LATERAL (SELECT t.eta FROM sundial.tasks t WHERE t.owner = s.owner ORDER BY t.eta LIMIT 1) e
		CROSS JOIN LATERAL (SELECT t.lease_until FROM sundial.tasks t WHERE t.owner = s.owner ORDER BY t.lease_until LIMIT 1) l) x`

// ClaimTasks settles c.Owner's acknowledgements, then claims, in one
// transaction (taskrows.Rows).
func (s *Store) ClaimTasks(ctx context.Context, c taskrows.Claim) (claimed []taskrows.Claimed, next time.Time, ok bool, err error) {
	if c.Max <= 0 && len(c.Done) == 0 && len(c.Retry) == 0 && len(c.Release) == 0 {
		return nil, time.Time{}, false, nil
	}
	if c.Lease <= 0 || c.OrphanAfter <= 0 {
		// Either would free a claim the moment it is made.
		return nil, time.Time{}, false, errors.New("postgres: ClaimTasks needs a positive Lease and OrphanAfter")
	}
	if c.Ahead < 0 {
		return nil, time.Time{}, false, errors.New("postgres: ClaimTasks needs an Ahead of zero or more")
	}
	now, err := nanos(c.Now)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	dueBy, err := nanos(c.Now.Add(c.Ahead))
	if err != nil {
		return nil, time.Time{}, false, err
	}
	names, etas, err := retries(c.Retry)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	alive := c.Alive
	if alive == nil {
		alive = []string{} // NULL would make <> ALL say nothing
	}
	// One round trip: the statements of a batch before its one Sync are
	// one implicit transaction, which commits at the Sync or not at all.
	var b pgx.Batch
	queueAck(&b, c.Owner, c.Done, names, etas)
	if len(c.Release) > 0 {
		b.Queue("UPDATE sundial.tasks SET owner = NULL, lease_until = NULL WHERE name = ANY($1) AND owner = $2", c.Release, c.Owner)
	}
	if c.Max > 0 {
		query, args := claimQuery, []any{alive, c.Max, dueBy, now, c.Owner, now - int64(c.OrphanAfter), int64(c.Lease)}
		if len(c.Recover) > 0 {
			recover := make([]int64, len(c.Recover))
			for i, at := range c.Recover {
				if recover[i], err = nanos(at); err != nil {
					return nil, time.Time{}, false, err
				}
			}
			query, args = claimRecoverQuery, append(args, recover)
		}
		b.Queue(query, args...)
		b.Queue(nextDueQuery, alive, int64(c.OrphanAfter))
	}
	err = func() error {
		br := s.pool.SendBatch(ctx, &b)
		defer br.Close()
		for range b.Len() - 2*min(c.Max, 1) {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if c.Max <= 0 {
			return br.Close()
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		if claimed, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (taskrows.Claimed, error) { return scanTask(r) }); err != nil {
			return err
		}
		if next, ok, err = scanNextDue(br.QueryRow()); err != nil {
			return err
		}
		if len(claimed) == c.Max {
			// More may be due now: the caller asks again.
			next, ok = time.Time{}, false
		}
		return br.Close()
	}()
	if err != nil {
		if mayHaveCommitted(err) {
			err = fmt.Errorf("%w (%w)", err, taskrows.ErrOutcomeUnknown)
		}
		return nil, time.Time{}, false, fmt.Errorf("postgres: claim: %w", err)
	}
	s.commits.Add(1)
	// UPDATE … RETURNING gives its rows in no set order.
	slices.SortStableFunc(claimed, func(a, b taskrows.Claimed) int { return a.ETA.Compare(b.ETA) })
	return claimed, next, ok, nil
}

// mayHaveCommitted reports whether a write that failed with err may have
// committed all the same: its answer was lost, not its request (never
// sent, or refused by the server, which then rolled it back).
func mayHaveCommitted(err error) bool {
	var refused *pgconn.PgError
	var unconnected *pgconn.ConnectError
	return !pgconn.SafeToRetry(err) && !errors.As(err, &refused) && !errors.As(err, &unconnected) && !errors.Is(err, errRolledBack)
}

// errRolledBack: a COMMIT answered ROLLBACK, as it does in a transaction
// that failed.
var errRolledBack = errors.New("rolled back")

func retries(retry []taskrows.Retry) ([]string, []int64, error) {
	names, etas := make([]string, len(retry)), make([]int64, len(retry))
	for i, r := range retry {
		var err error
		if etas[i], err = etaNanos(r.ETA); err != nil {
			return nil, nil, err
		}
		names[i] = r.Name
	}
	return names, etas, nil
}

// queueAck queues the statements that delete done and hand back the
// retried tasks owner still holds at their new ETAs, with one more
// failure.
func queueAck(b *pgx.Batch, owner string, done, retry []string, etas []int64) {
	if len(done) > 0 {
		b.Queue("DELETE FROM sundial.tasks WHERE name = ANY($1)", done)
	}
	if len(retry) > 0 {
		b.Queue(`UPDATE sundial.tasks t SET eta = r.eta, failures = t.failures + 1, owner = NULL, lease_until = NULL
			FROM unnest($1::text[], $2::bigint[]) AS r(name, eta) WHERE t.name = r.name AND t.owner = $3`, retry, etas, owner)
	}
}

// send runs b's statements, which return no rows, in one round trip and
// one implicit transaction.
func (s *Store) send(ctx context.Context, b *pgx.Batch) error {
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	for range b.Len() {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	s.commits.Add(1)
	return nil
}

// AckTasks deletes the tasks done and hands back retry, in one transaction.
func (s *Store) AckTasks(ctx context.Context, owner string, done []string, retry []taskrows.Retry) error {
	if len(done) == 0 && len(retry) == 0 {
		return nil
	}
	names, etas, err := retries(retry)
	if err != nil {
		return err
	}
	var b pgx.Batch
	queueAck(&b, owner, done, names, etas)
	return s.send(ctx, &b)
}

// Heartbeat records that owner is alive at now, and forgets the owners
// silent for orphanAfter.
func (s *Store) Heartbeat(ctx context.Context, owner string, now time.Time, orphanAfter time.Duration) error {
	if orphanAfter <= 0 {
		// The owner would forget itself at once.
		return errors.New("postgres: Heartbeat needs a positive orphanAfter")
	}
	n, err := nanos(now)
	if err != nil {
		return err
	}
	var b pgx.Batch
	b.Queue(beatQuery, owner, n)
	b.Queue("DELETE FROM sundial.owners WHERE heartbeat <= $1 AND owner <> $2", n-int64(orphanAfter), owner)
	return s.send(ctx, &b)
}

// NextDue is when ClaimTasks could next claim something (taskrows.Rows).
func (s *Store) NextDue(ctx context.Context, orphanAfter time.Duration, alive ...string) (time.Time, bool, error) {
	if alive == nil {
		alive = []string{}
	}
	return scanNextDue(s.pool.QueryRow(ctx, nextDueQuery, alive, int64(orphanAfter)))
}

func scanNextDue(row pgx.Row) (time.Time, bool, error) {
	var at *int64
	if err := row.Scan(&at); err != nil || at == nil {
		return time.Time{}, false, err
	}
	return fromETA(*at), true, nil
}

// ForgetOwner deletes owner's heartbeat: its claims are free at once.
func (s *Store) ForgetOwner(ctx context.Context, owner string) error {
	_, err := s.pool.Exec(ctx, "DELETE FROM sundial.owners WHERE owner = $1", owner)
	return err
}

// CountTasks returns how many tasks are queued, held ones included.
func (s *Store) CountTasks(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, "SELECT count(*) FROM sundial.tasks").Scan(&n)
	return n, err
}

// Tasks lists up to limit queued tasks, earliest ETA first, held ones
// included.
func (s *Store) Tasks(ctx context.Context, limit int) ([]task.Task, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+taskColumns+" FROM sundial.tasks ORDER BY eta, name LIMIT $1", limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (task.Task, error) {
		c, err := scanTask(r)
		return c.Task, err
	})
}
