package main

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/store/postgres"
)

// The faults of the PostgreSQL shape, each on real processes: two
// instances of sundial serve running ten every-second jobs on a
// PostgreSQL server of the test's own. In each, no occurrence reaches the
// receiver twice, every occurrence is launched or recorded as skipped with
// a reason, and every job fires again within a bound the test states.

// fleet is the two instances, their receiver, and the database.
type fleet struct {
	pg        *pgtest.Server
	url       string
	recv      *receiver
	args      []string // each instance's serve flags
	instances []*runningServer
}

const fleetJobs = 10

// startFleet starts a PostgreSQL server, a database on it and two
// instances, and waits until every job launched three times.
func startFleet(t *testing.T) *fleet {
	t.Helper()
	pg := pgtest.Own(t)
	f := &fleet{pg: pg, url: pg.Database(t), recv: newReceiver(t, 200*time.Millisecond)}
	configs := filepath.Join(t.TempDir(), "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "e2e", everySecond(fleetJobs, f.recv.URL))
	f.args = []string{"--backend", "postgres", "--database-url", f.url, "--config-dir", configs}
	for range 2 {
		f.instances = append(f.instances, serve(t, f.args...))
	}
	f.recv.waitFor(t, time.Minute, "three launches of every job", func(hits []hit) bool {
		return minPerJob(hits, fleetJobs, time.Time{}) >= 3
	})
	return f
}

// firesAgain waits until every job fired after since, and fails the test
// for each that took longer than bound.
func (f *fleet) firesAgain(t *testing.T, since time.Time, bound time.Duration) {
	t.Helper()
	hits := f.recv.waitFor(t, bound+time.Minute, "every job to fire again", func(hits []hit) bool {
		return minPerJob(hits, fleetJobs, since) >= 2
	})
	for job, at := range firstAfter(hits, since) {
		if late := at.Sub(since); late > bound {
			t.Errorf("%s fired again %v after the fault; want within %v", job, late.Round(time.Millisecond), bound)
		}
	}
}

// check stops the instances and checks that no occurrence was launched
// twice and that every one is accounted for.
func (f *fleet) check(t *testing.T) {
	t.Helper()
	for _, s := range f.instances {
		select {
		case <-s.done:
		default:
			s.stop(t)
		}
	}
	hits, _ := f.recv.snapshot()
	accounted(t, f.url, fleetJobs, onceEach(t, hits)).Close()
}

// accounted checks that every occurrence of the jobs e2e/j0... of the
// database at url is accounted for (checkAccounted), and returns the store
// it read them from, for more checks.
func accounted(t *testing.T, url string, jobs int, seen map[string]hit) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := withTimeout(t, time.Minute)
	for i := range jobs {
		jobID := fmt.Sprintf("e2e/j%d", i)
		checkAccounted(t, jobID, allInvocations(t, ctx, st, jobID), seen)
	}
	return st
}

// admin runs statements on the test's server as its superuser.
func (f *fleet) admin(t *testing.T, sql ...string) {
	t.Helper()
	ctx := withTimeout(t, time.Minute)
	conn, err := pgx.Connect(ctx, f.pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, q := range sql {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// terminateSundial ends every connection to the fleet's database but the
// caller's.
const terminateSundial = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	WHERE datname = current_setting('sundial.test_db') AND pid <> pg_backend_pid()`

// TestPostgresShapeSurvivesInstancesKilledInALoop: each instance in turn
// killed with -9 and started again, eight times two seconds apart, under
// load; then both run on. Every job fires again within 100 s of the last
// kill (the bound of TestPostgresShapeInstancesShareOneDatabaseAndSurviveKill9).
func TestPostgresShapeSurvivesInstancesKilledInALoop(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	var last time.Time
	for i := range 8 {
		n := i % 2
		f.instances[n].kill(t)
		last = time.Now()
		time.Sleep(time.Second)
		f.instances[n] = serve(t, f.args...)
		time.Sleep(time.Second)
	}
	f.firesAgain(t, last, 100*time.Second)
	f.check(t)
}

// TestPostgresShapeSurvivesACrashOfPostgreSQL: PostgreSQL stopped as by a
// crash (SIGQUIT: pg_ctl stop -m immediate), down for 3 s, and started
// again, recovering from its WAL. Every job fires again within 20 s of
// its restart: the instances' pools connect again at their next
// transaction, and their claims held through the outage.
func TestPostgresShapeSurvivesACrashOfPostgreSQL(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	f.pg.Stop(t, "immediate")
	time.Sleep(3 * time.Second)
	f.pg.Restart(t)
	f.firesAgain(t, time.Now(), 20*time.Second)
	f.check(t)
}

// TestPostgresShapeSurvivesTerminatedConnections: every connection of the
// instances terminated (pg_terminate_backend) ten times in five seconds,
// under load. Every job fires again within 10 s of the last.
func TestPostgresShapeSurvivesTerminatedConnections(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	for range 10 {
		f.admin(t, "SET sundial.test_db = '"+databaseOf(t, f.url)+"'", terminateSundial)
		time.Sleep(500 * time.Millisecond)
	}
	f.firesAgain(t, time.Now(), 10*time.Second)
	f.check(t)
}

// TestPostgresShapeSurvivesAReadOnlyDatabase: the database turned
// read-only for 5 s (default_transaction_read_only, with every connection
// terminated so that each new one has it), then writable again. While it
// is read-only nothing launches, since every launch is written before its
// target is called; after, every job fires again within 10 s.
func TestPostgresShapeSurvivesAReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	db := databaseOf(t, f.url)
	f.admin(t, "ALTER DATABASE "+db+" SET default_transaction_read_only = on", "SET sundial.test_db = '"+db+"'", terminateSundial)
	readOnly := time.Now()
	time.Sleep(5 * time.Second)
	f.admin(t, "ALTER DATABASE "+db+" SET default_transaction_read_only = off", "SET sundial.test_db = '"+db+"'", terminateSundial)
	writable := time.Now()
	hits, _ := f.recv.snapshot()
	// A launch written before the switch may reach its target after it;
	// none written after can.
	for _, h := range hits {
		if h.at.After(readOnly.Add(time.Second)) && h.at.Before(writable) {
			t.Errorf("%s %s launched at %v, while the database was read-only", h.job, h.scheduled, h.at)
		}
	}
	f.firesAgain(t, writable, 10*time.Second)
	f.check(t)
}

// TestPostgresShapeSurvivesAnInstanceStoppedPastItsClaims: one instance
// stopped (SIGSTOP) for 40 s, past the 30 s after which the other takes
// its claims over, then resumed (SIGCONT), its launches under way going on
// where they were. The other runs every job meanwhile: a job with nothing
// in flight on the stopped instance fires again once its claims are
// orphaned, one whose invocation was running there once that invocation
// ends at its deadline (5 s timeout, 30 s task grace) and the next
// minute's watchdog pass finds it: every job within 100 s of the stop.
// Nothing launches twice, before or after the resumed instance goes on.
func TestPostgresShapeSurvivesAnInstanceStoppedPastItsClaims(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	stopped := f.instances[0]
	if err := stopped.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stop := time.Now()
	time.Sleep(40 * time.Second)
	if err := stopped.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.firesAgain(t, stop, 100*time.Second)
	f.check(t)
}

// databaseOf is the database name of a connection URL.
func databaseOf(t *testing.T, url string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}
