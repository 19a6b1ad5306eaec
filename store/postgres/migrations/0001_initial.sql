-- The first schema of the PostgreSQL store: the tables of store/sqlite's
-- sixth version, in PostgreSQL's types. Times of records are timestamptz
-- (microseconds, which the store's contract allows); NULL is the zero
-- time. The task rows' times (eta, lease_until, heartbeat) are bigint Unix
-- nanoseconds, as the dispatcher computes them, so that a task is never
-- held a microsecond short of its ETA.

CREATE TABLE sundial.jobs (
	id          text PRIMARY KEY,
	project     text NOT NULL,
	state       text NOT NULL,
	watchdog_ts timestamptz, -- NULL: the job waits for no task
	definition  bytea,
	machine     bytea
);
-- Partial, so the watchdog's query costs the number of waiting jobs that
-- are overdue, and PAUSED/DISABLED jobs cost nothing.
CREATE INDEX jobs_watchdog ON sundial.jobs (watchdog_ts, id) WHERE watchdog_ts IS NOT NULL;
CREATE INDEX jobs_project ON sundial.jobs (project, id);

-- A job's definitions, each stored once however many invocations run
-- under it.
CREATE TABLE sundial.definitions (
	job_id     text NOT NULL,
	hash       text NOT NULL,
	definition bytea NOT NULL,
	PRIMARY KEY (job_id, hash)
);

CREATE TABLE sundial.invocations (
	job_id          text NOT NULL,
	id              text NOT NULL,
	occurrence      timestamptz NOT NULL,
	status          text NOT NULL,
	attempt         integer NOT NULL,
	manual          boolean NOT NULL,
	triggered_by    text NOT NULL,
	created         timestamptz,
	started         timestamptz,
	ended           timestamptz,
	message         text NOT NULL,
	reason          text NOT NULL,
	count           integer NOT NULL,
	last            timestamptz,
	backfill        boolean NOT NULL,
	definition_hash text NOT NULL,
	definition      bytea, -- never written: store/sqlite's rows of old releases have it
	log             bytea,
	PRIMARY KEY (job_id, id)
);
CREATE INDEX invocations_newest ON sundial.invocations (job_id, occurrence DESC, id DESC);
-- Retention's queries (Store.Expired), one partial index per class of
-- finished records, so finding what to delete costs what it finds.
CREATE INDEX invocations_done ON sundial.invocations (job_id, occurrence, id) WHERE status IN ('SUCCEEDED', 'SKIPPED');
CREATE INDEX invocations_failed ON sundial.invocations (job_id, occurrence, id) WHERE status IN ('FAILED', 'ABORTED');

-- A project's record (store.ProjectRecord).
CREATE TABLE sundial.projects (
	id      text PRIMARY KEY,
	encoded bytea NOT NULL
);

-- The rows of task/local's dispatchers, one per instance. failures counts
-- failed deliveries, for backoff; owner and lease_until are set while a
-- dispatcher holds the task.
CREATE TABLE sundial.tasks (
	name        text PRIMARY KEY,
	job_id      text NOT NULL,
	kind        text NOT NULL,
	nonce       bigint NOT NULL,
	eta         bigint NOT NULL,
	invocation  text NOT NULL,
	attempt     integer NOT NULL,
	failures    integer NOT NULL DEFAULT 0,
	owner       text,
	lease_until bigint
);
-- Free tasks by ETA: claims and NextDue read the earliest.
CREATE INDEX tasks_free ON sundial.tasks (eta) WHERE owner IS NULL;
-- Claimed tasks are few (at most the dispatchers' workers), and claims
-- must find the orphaned ones without scanning the backlog of future
-- ticks.
CREATE INDEX tasks_claimed ON sundial.tasks (owner, eta) WHERE owner IS NOT NULL;

-- Each instance's dispatcher, with its last heartbeat.
CREATE TABLE sundial.owners (
	owner     text PRIMARY KEY,
	heartbeat bigint NOT NULL
);

-- The once-a-minute passes, one row each: the instance that moves next
-- on runs the pass, so the fleet runs it once per turn.
CREATE TABLE sundial.passes (
	name text PRIMARY KEY,
	next timestamptz NOT NULL
);

-- The ended sessions of the console's sign-in, which every instance must
-- refuse (signin.Revocations).
CREATE TABLE sundial.revocations (
	id      text PRIMARY KEY,
	expires timestamptz NOT NULL
);

-- Which PostgreSQL cluster and timeline the database was last started
-- on: a database restored from a backup (a new cluster, or a new timeline
-- after point-in-time recovery) is noticed at start.
CREATE TABLE sundial.lineage (
	one         boolean PRIMARY KEY DEFAULT true CHECK (one),
	system_id   text NOT NULL,
	timeline    bigint NOT NULL,
	restored_at timestamptz
);
