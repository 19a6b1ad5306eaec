package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migrations[i] takes the schema from user_version i to i+1. Append only:
// a file written by an older binary is brought forward step by step.
//
// Times are INTEGER Unix nanoseconds in UTC; NULL is the zero time.
var migrations = []string{`
CREATE TABLE jobs (
	id          TEXT PRIMARY KEY,
	project     TEXT NOT NULL,
	state       TEXT NOT NULL,
	watchdog_ts INTEGER, -- NULL: the job waits for no task
	definition  BLOB,
	machine     BLOB
);
-- Partial, so the watchdog's query costs the number of waiting jobs that
-- are overdue, and PAUSED/DISABLED jobs cost nothing.
CREATE INDEX jobs_watchdog ON jobs(watchdog_ts, id) WHERE watchdog_ts IS NOT NULL;
CREATE INDEX jobs_project ON jobs(project, id);

CREATE TABLE invocations (
	job_id     TEXT NOT NULL,
	id         TEXT NOT NULL,
	occurrence INTEGER NOT NULL,
	status     TEXT NOT NULL,
	attempt    INTEGER NOT NULL,
	manual     INTEGER NOT NULL,
	created    INTEGER,
	started    INTEGER,
	ended      INTEGER,
	message    TEXT NOT NULL,
	reason     TEXT NOT NULL,
	count      INTEGER NOT NULL,
	last       INTEGER,
	definition BLOB,
	log        BLOB,
	PRIMARY KEY (job_id, id)
);
CREATE INDEX invocations_newest ON invocations(job_id, occurrence DESC, id DESC);

-- The rows of task/local. failures counts failed deliveries, for backoff;
-- owner and lease_until are set while a dispatcher holds the task.
CREATE TABLE tasks (
	name        TEXT PRIMARY KEY,
	job_id      TEXT NOT NULL,
	kind        TEXT NOT NULL,
	nonce       INTEGER NOT NULL,
	eta         INTEGER NOT NULL,
	invocation  TEXT NOT NULL,
	attempt     INTEGER NOT NULL,
	failures    INTEGER NOT NULL DEFAULT 0,
	owner       TEXT,
	lease_until INTEGER
);
CREATE INDEX tasks_eta ON tasks(eta);
-- Claimed tasks are few (at most the dispatchers' workers), and NextDue
-- must find them without scanning the backlog of future ticks.
CREATE INDEX tasks_claimed ON tasks(owner) WHERE owner IS NOT NULL;

CREATE TABLE owners (
	owner     TEXT PRIMARY KEY,
	heartbeat INTEGER NOT NULL
);
`, `
-- Bumped by every transaction that writes the job's group: an Update that
-- ran its function on the Store's cache commits only if the job is still
-- at the version cached (see cache.go).
ALTER TABLE jobs ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
`, `
-- A job's definitions, each stored once however many invocations run
-- under it: an invocation names its own by hash (definition_hash). Rows
-- of invocations written before this version hold the bytes in their
-- definition column instead, and keep them.
CREATE TABLE definitions (
	job_id     TEXT NOT NULL,
	hash       TEXT NOT NULL,
	definition BLOB NOT NULL,
	PRIMARY KEY (job_id, hash)
);
ALTER TABLE invocations ADD COLUMN definition_hash TEXT NOT NULL DEFAULT '';
`, `
-- Who asked for a manual occurrence; '' for scheduled ones and for rows
-- written before this version.
ALTER TABLE invocations ADD COLUMN triggered_by TEXT NOT NULL DEFAULT '';

-- A project's record (store.ProjectRecord): the engine's blob of what its
-- running revision says about the project as a whole.
CREATE TABLE projects (
	id      TEXT PRIMARY KEY,
	encoded BLOB NOT NULL
);
`, `
-- Retention's queries (Store.Expired), one partial index per class of
-- finished records, so finding what to delete costs what it finds: not
-- the other class's records, nor the unfinished ones, which retention
-- never deletes. The WHERE terms are repeated word for word in the
-- queries, which is how SQLite knows it may use them; status is in the
-- index so that they read it alone (SQLite checks the term again).
CREATE INDEX invocations_done ON invocations(job_id, occurrence, id, status) WHERE status IN ('SUCCEEDED', 'SKIPPED');
CREATE INDEX invocations_failed ON invocations(job_id, occurrence, id, status) WHERE status IN ('FAILED', 'ABORTED');
`, `
-- Whether a backfill ran the occurrence (store.InvocationRecord.Backfill);
-- 0 for rows written before this version.
ALTER TABLE invocations ADD COLUMN backfill INTEGER NOT NULL DEFAULT 0;
`, `
-- A project's invocations of a status class across its jobs, newest first
-- (Store.ProjectInvocations, which merges the classes for all of them):
-- the job's project and the status's class (store.StatusClass) are
-- virtual columns, computed from job_id and status, so no row is
-- rewritten and no write sets them; the index over them takes in the rows
-- already there. A job's own listing keeps invocations_newest.
ALTER TABLE invocations ADD COLUMN project TEXT GENERATED ALWAYS AS (substr(job_id, 1, instr(job_id, '/') - 1)) VIRTUAL;
ALTER TABLE invocations ADD COLUMN class TEXT GENERATED ALWAYS AS (CASE status
	WHEN 'SUCCEEDED' THEN 'succeeded' WHEN 'FAILED' THEN 'failed' WHEN 'ABORTED' THEN 'failed'
	WHEN 'SKIPPED' THEN 'skipped' ELSE 'running' END) VIRTUAL;
CREATE INDEX invocations_project_class ON invocations(project, class, occurrence DESC, job_id DESC, id DESC);
`}

// ErrNewerSchema is wrapped by the error Open returns for a file whose
// schema a newer release migrated: this release could misread it (a
// column it does not know holds part of a job) and would run on it, so it
// refuses the file whole and writes nothing to it.
var ErrNewerSchema = errors.New("written by a newer release of Sundial")

// newerSchema is the refusal of a file at schema version v, saying what
// to do.
func newerSchema(v int) error {
	return fmt.Errorf("%w (schema version %d; this release reads versions up to %d): "+
		"run the newer release, or restore the backup taken before the upgrade to go back to this one (docs/upgrade.md)",
		ErrNewerSchema, v, len(migrations))
}

// migrate brings the file's schema to len(migrations). Two processes may
// open a new file at once: the version is re-read under the write lock.
// A version past len(migrations) is refused before the lock: versions
// only grow.
func migrate(conn *sql.Conn) error {
	ctx := context.Background()
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		// Without WAL, readers would block the committer and vice versa.
		return fmt.Errorf("journal_mode is %q, not wal", mode)
	}
	version := func() (int, error) {
		var v int
		err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
		return v, err
	}
	v, err := version()
	switch {
	case err != nil || v == len(migrations):
		return err
	case v > len(migrations):
		return newerSchema(v)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	err = func() error {
		v, err := version()
		if err != nil {
			return err
		}
		if v > len(migrations) {
			return newerSchema(v)
		}
		for ; v < len(migrations); v++ {
			if _, err := conn.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migration to %d: %w", v+1, err)
			}
		}
		_, err = conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations)))
		return err
	}()
	if err != nil {
		_, rbErr := conn.ExecContext(ctx, "ROLLBACK")
		return errors.Join(err, rbErr)
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}
