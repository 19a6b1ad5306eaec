package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// This file is the task queue's side of the store, for task/local. Every
// write goes through the committer, so it shares batches with Updates
// instead of contending for the file's lock.
// Times are arguments: nothing here reads a clock.

// Adopt sets the Store's adoption to a, replacing any; nil stops adopting.
func (s *Store) Adopt(a *taskrows.Adoption) { s.adoption.Store(a) }

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

// ClaimTasks claims up to c.Max tasks due, or due within c.Ahead, for
// c.Owner in one transaction, earliest ETA first. A task is free if no one
// holds it, or if its owner is not in c.Alive and its lease has expired or
// its owner's heartbeat is older than c.OrphanAfter (or gone). Claiming
// also records c.Owner's heartbeat, so that its fresh claims are never
// taken for orphans.
//
// A claim that finds nothing due and acknowledges nothing writes nothing,
// not even the heartbeat: the owner holds nothing that could look
// orphaned, and a stepping dispatcher's last claim of a step is such a
// claim.
//
// A claim that finds fewer than c.Max tasks due also returns when the next
// one will be (ok false if none is left), as NextDue would right after it:
// read in its transaction, on the committer's warm pages, instead of by
// the dispatcher on a reader afterwards. A claim that takes c.Max tasks
// stops looking: next and ok are then zero and say nothing, and the
// caller asks NextDue if it needs to know.
func (s *Store) ClaimTasks(ctx context.Context, c taskrows.Claim) (claimed []taskrows.Claimed, next time.Time, ok bool, err error) {
	if c.Max <= 0 && len(c.Done) == 0 && len(c.Retry) == 0 && len(c.Release) == 0 {
		return nil, time.Time{}, false, nil
	}
	if c.Lease <= 0 || c.OrphanAfter <= 0 {
		// Either would free a claim the moment it is made.
		return nil, time.Time{}, false, errors.New("sqlite: ClaimTasks needs a positive Lease and OrphanAfter")
	}
	now, err := nanos(c.Now)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	if c.Ahead < 0 {
		return nil, time.Time{}, false, errors.New("sqlite: ClaimTasks needs an Ahead of zero or more")
	}
	dueBy, err := nanos(c.Now.Add(c.Ahead))
	if err != nil {
		return nil, time.Time{}, false, err
	}
	etas, err := retryETAs(c.Retry)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	alive, err := ownerList(c.Alive)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	err = s.write(ctx, false, nil, func(w *writer) error {
		claimed, next, ok = nil, time.Time{}, false
		if err := ack(w, c.Owner, c.Done, c.Retry, etas); err != nil {
			return err
		}
		if err := release(w, c.Owner, c.Release); err != nil {
			return err
		}
		if c.Max <= 0 {
			return nil
		}
		var err error
		if claimed, err = claimDue(w, c, now, dueBy, alive); err != nil || len(claimed) == c.Max {
			return err
		}
		next, ok, err = scanNextDue(w.queryRow(nextDueQuery, int64(c.OrphanAfter), alive))
		return err
	})
	if err != nil {
		return nil, time.Time{}, false, err
	}
	return claimed, next, ok, nil
}

// claimSelect reads the tasks a claim may take, earliest first: free, or
// held by an owner not known alive whose lease ended or whose heartbeat
// stopped. claimRecoverSelect also reads the claiming owner's own tasks
// written claimed at one of the clock readings of taskrows.Claim.Recover:
// their lease is from that reading or their ETA, whichever is later.
var (
	claimSelect        = claimSelectWith("")
	claimRecoverSelect = claimSelectWith(` OR (owner = ? AND EXISTS (
			SELECT 1 FROM json_each(?) r WHERE tasks.lease_until = max(tasks.eta, r.value) + ?))`)
)

func claimSelectWith(recovered string) string {
	return `SELECT ` + taskColumns + ` FROM tasks
		WHERE eta <= ? AND (owner IS NULL OR (owner NOT IN (SELECT value FROM json_each(?)) AND (lease_until <= ? OR NOT EXISTS (
			SELECT 1 FROM owners o WHERE o.owner = tasks.owner AND o.heartbeat > ?)))` + recovered + `)
		ORDER BY eta`
}

// claimDue claims up to c.Max tasks due by dueBy for c.Owner on w,
// earliest first; alive is c.Alive as ownerList gives it.
func claimDue(w *writer, c taskrows.Claim, now, dueBy int64, alive string) ([]taskrows.Claimed, error) {
	// A SELECT and an UPDATE per row rather than one UPDATE … WHERE name
	// IN (SELECT …) RETURNING: that statement built two temporary tables
	// (its IN list and its RETURNING rows) on every run, each allocating
	// and freeing pages, and SQLite prepared it again on every run; it was
	// a third of the simulator's CPU. No LIMIT ?: SQLite re-prepares a
	// statement whenever the value bound to its LIMIT changes; the rows
	// come in index order, and reading stops at c.Max.
	query, args := claimSelect, []any{dueBy, alive, now, now - int64(c.OrphanAfter)}
	if len(c.Recover) > 0 {
		recover, err := nanosList(c.Recover)
		if err != nil {
			return nil, err
		}
		query, args = claimRecoverSelect, append(args, c.Owner, recover, int64(c.Lease))
	}
	rows, err := w.query(query, args...)
	if err != nil {
		return nil, err
	}
	var claimed []taskrows.Claimed
	for len(claimed) < c.Max && rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		claimed = append(claimed, t)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if len(claimed) == 0 {
		return nil, nil
	}
	if err := heartbeat(w, c.Owner, now, now-int64(c.OrphanAfter)); err != nil {
		return nil, err
	}
	for _, t := range claimed {
		from := now
		if t.ETA.After(c.Now) {
			// taskrows.Claimed ahead: held from its ETA, when it starts.
			from = t.ETA.UnixNano()
		}
		if _, err := w.exec("UPDATE tasks SET owner = ?, lease_until = ? WHERE name = ?", c.Owner, from+int64(c.Lease), t.Name()); err != nil {
			return nil, err
		}
	}
	return claimed, nil
}

// AckTasks deletes the handled tasks done and hands back the tasks retry,
// all in one transaction. A retry of a task that owner no longer holds
// (its lease expired and another dispatcher claimed it) changes nothing.
func (s *Store) AckTasks(ctx context.Context, owner string, done []string, retry []taskrows.Retry) error {
	if len(done) == 0 && len(retry) == 0 {
		return nil
	}
	etas, err := retryETAs(retry)
	if err != nil {
		return err
	}
	return s.write(ctx, false, nil, func(w *writer) error {
		return ack(w, owner, done, retry, etas)
	})
}

func retryETAs(retry []taskrows.Retry) ([]int64, error) {
	etas := make([]int64, len(retry))
	for i, r := range retry {
		var err error
		if etas[i], err = etaNanos(r.ETA); err != nil {
			return nil, err
		}
	}
	return etas, nil
}

// ack deletes done and hands back retry at etas, for owner.
func ack(w *writer, owner string, done []string, retry []taskrows.Retry, etas []int64) error {
	for _, name := range done {
		if _, err := w.exec("DELETE FROM tasks WHERE name = ?", name); err != nil {
			return err
		}
	}
	for i, r := range retry {
		_, err := w.exec(`UPDATE tasks SET eta = ?, failures = failures + 1, owner = NULL, lease_until = NULL
			WHERE name = ? AND owner = ?`, etas[i], r.Name, owner)
		if err != nil {
			return err
		}
	}
	return nil
}

// release frees owner's claims of names.
func release(w *writer, owner string, names []string) error {
	for _, name := range names {
		if _, err := w.exec("UPDATE tasks SET owner = NULL, lease_until = NULL WHERE name = ? AND owner = ?", name, owner); err != nil {
			return err
		}
	}
	return nil
}

// Heartbeat records that owner is alive at now, and forgets owners silent
// for orphanAfter: a claim whose owner has no row is free anyway.
func (s *Store) Heartbeat(ctx context.Context, owner string, now time.Time, orphanAfter time.Duration) error {
	if orphanAfter <= 0 {
		// The owner would forget itself at once.
		return errors.New("sqlite: Heartbeat needs a positive orphanAfter")
	}
	n, err := nanos(now)
	if err != nil {
		return err
	}
	return s.write(ctx, false, nil, func(w *writer) error {
		return heartbeat(w, owner, n, n-int64(orphanAfter))
	})
}

func heartbeat(w *writer, owner string, now, forgetBefore int64) error {
	if err := beat(w, owner, now); err != nil {
		return err
	}
	_, err := w.exec("DELETE FROM owners WHERE heartbeat <= ?", forgetBefore)
	return err
}

// beat records owner's heartbeat at now. max(): a late heartbeat with an
// older time must not make a live owner look older than it is.
func beat(w *writer, owner string, now int64) error {
	_, err := w.exec(`INSERT INTO owners (owner, heartbeat) VALUES (?, ?)
		ON CONFLICT (owner) DO UPDATE SET heartbeat = max(heartbeat, excluded.heartbeat)`, owner, now)
	return err
}

// NextDue returns the earliest time at which some task can be claimed
// under ClaimTasks' rules with this orphanAfter and these owners known
// alive, and false if there is no such task. It may be in the past. For a
// task held by an owner not known alive it assumes the owner stops
// heartbeating now, so a dispatcher that sleeps until then and finds the
// owner alive just sleeps again; the tasks of an owner known alive are
// left out, as free only once it is known dead.
func (s *Store) NextDue(ctx context.Context, orphanAfter time.Duration, alive ...string) (time.Time, bool, error) {
	list, err := ownerList(alive)
	if err != nil {
		return time.Time{}, false, err
	}
	return scanNextDue(s.read.QueryRowContext(ctx, nextDueQuery, int64(orphanAfter), list))
}

// nextDueQuery takes free tasks from the ETA index; held ones are few and
// come from the partial index tasks_claimed, so the backlog of future
// ticks is never scanned.
const nextDueQuery = `SELECT min(at) FROM (
		SELECT eta AS at FROM (SELECT eta FROM tasks WHERE owner IS NULL ORDER BY eta LIMIT 1)
		UNION ALL
		SELECT max(t.eta, CASE WHEN o.owner IS NULL THEN t.eta ELSE min(t.lease_until, o.heartbeat + ?) END)
		FROM tasks t LEFT JOIN owners o ON o.owner = t.owner
		WHERE t.owner IS NOT NULL AND t.owner NOT IN (SELECT value FROM json_each(?)))`

// ownerList is owners as the JSON array the queries read with json_each:
// "[]" for none, since json_each(NULL) would make NOT IN say nothing.
func ownerList(owners []string) (string, error) {
	if len(owners) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(owners)
	return string(b), err
}

// nanosList is times as a JSON array of Unix nanoseconds, for json_each.
func nanosList(times []time.Time) (string, error) {
	ns := make([]int64, len(times))
	for i, t := range times {
		var err error
		if ns[i], err = nanos(t); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(ns)
	return string(b), err
}

func scanNextDue(row scanner) (time.Time, bool, error) {
	var at sql.NullInt64
	if err := row.Scan(&at); err != nil || !at.Valid {
		return time.Time{}, false, err
	}
	return fromETA(at.Int64), true, nil
}

// CountTasks returns how many tasks are queued, held ones included.
func (s *Store) CountTasks(ctx context.Context) (int, error) {
	var n int
	err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM tasks").Scan(&n)
	return n, err
}

// Tasks lists up to limit queued tasks, earliest ETA first, held ones
// included.
func (s *Store) Tasks(ctx context.Context, limit int) ([]task.Task, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT "+taskColumns+" FROM tasks ORDER BY eta, name LIMIT ?", limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tasks []task.Task
	for rows.Next() {
		c, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, c.Task)
	}
	return tasks, rows.Err()
}
