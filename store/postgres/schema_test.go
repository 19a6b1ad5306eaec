package postgres

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/store"
)

var createGoldens = flag.Bool("create-goldens", false, "write the golden schema of the current version if it does not exist yet (never overwrites one)")

// describeSchema is schema sundial as the catalog holds it: each table's
// columns with their types, nullability and defaults, its constraints,
// and its indexes, in a stable order. Read from the catalog rather than
// pg_dump, whose text differs between PostgreSQL releases.
func describeSchema(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	ctx := t.Context()
	var b strings.Builder
	lines := func(title, query string) {
		rows, err := pool.Query(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "-- %s\n%s\n\n", title, strings.Join(got, "\n"))
	}
	lines("columns", `SELECT table_name || '.' || column_name || ' ' || data_type ||
			CASE WHEN is_nullable = 'NO' THEN ' NOT NULL' ELSE '' END ||
			coalesce(' DEFAULT ' || column_default, '')
		FROM information_schema.columns WHERE table_schema = 'sundial'
		ORDER BY table_name, ordinal_position`)
	lines("constraints", `SELECT c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
		FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
		WHERE n.nspname = 'sundial' ORDER BY 1`)
	lines("indexes", `SELECT indexdef FROM pg_indexes WHERE schemaname = 'sundial' ORDER BY tablename, indexname`)
	return b.String()
}

// TestTheSchemaIsPinned: the schema the migrations make is the golden
// file of its version, and an earlier version's golden file is never
// changed (migrations are forward only: a change is a new migration).
func TestTheSchemaIsPinned(t *testing.T) {
	t.Parallel()
	s := open(t)
	got := describeSchema(t, s.pool)
	path := filepath.Join("testdata", "schema", fmt.Sprintf("%04d.txt", SchemaVersion()))
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && *createGoldens {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v (a new schema version: run go test ./store/postgres/ -run TestTheSchemaIsPinned -create-goldens)", err)
	}
	if got != string(want) {
		t.Errorf("the schema at version %d is not %s:\n%s", SchemaVersion(), path, got)
	}
}

// TestANewerSchemaIsRefused: a database a newer release migrated is
// refused at Open, and nothing is written to it.
func TestANewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	s, err := Open(t.Context(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(t.Context(), "INSERT INTO sundial.schema_migrations (version, name) VALUES ($1, 'from_the_future.sql')", SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	before := describeSchema(t, s.pool)
	s.Close()
	_, err = Open(t.Context(), url, Options{})
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a database at version %d: %v, want ErrNewerSchema", SchemaVersion()+1, err)
	}
	if !strings.Contains(err.Error(), "docs/upgrade.md") {
		t.Errorf("the refusal does not say what to do: %v", err)
	}
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if after := describeSchema(t, pool); after != before {
		t.Errorf("the refused Open changed the schema:\n%s", after)
	}
}

// TestInstancesStartingTogetherMigrateOnce: many Opens of a new database
// at once all succeed, and each migration ran once.
func TestInstancesStartingTogetherMigrateOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s, err := Open(t.Context(), url, Options{MaxConns: 2})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var rows, versions int
	if err := pool.QueryRow(t.Context(), "SELECT count(*), count(DISTINCT version) FROM sundial.schema_migrations").Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows != SchemaVersion() || versions != SchemaVersion() {
		t.Errorf("%d migration records of %d versions, want %d of %d", rows, versions, SchemaVersion(), SchemaVersion())
	}
}

// TestADryRunListsWhatWouldRunAndRunsNothing: Migrate with dryRun on a new
// database lists every migration and creates nothing; on a migrated one,
// none.
func TestADryRunListsWhatWouldRunAndRunsNothing(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var pending []Migration
	if err := Migrate(t.Context(), pool, &pending); err != nil {
		t.Fatal(err)
	}
	if len(pending) != SchemaVersion() || pending[0].Name != "0001_initial.sql" {
		t.Errorf("a new database's dry run lists %d migrations, want all %d from 0001_initial.sql", len(pending), SchemaVersion())
	}
	var exists bool
	if err := pool.QueryRow(t.Context(), "SELECT to_regnamespace('sundial') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Errorf("the dry run created schema sundial (%v)", err)
	}
	if err := Migrate(t.Context(), pool, nil); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(t.Context(), pool, &pending); err != nil || len(pending) != 0 {
		t.Errorf("a migrated database's dry run lists %d migrations (%v), want none", len(pending), err)
	}
}

// TestADatabaseOfTheFirstSchemaIsBroughtForward: a database a release at
// schema version 1 wrote, with a record in it, is migrated at Open, and
// the record is listed across its project by its class.
func TestADatabaseOfTheFirstSchemaIsBroughtForward(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx := t.Context()
	for _, q := range []string{
		`CREATE SCHEMA sundial; CREATE TABLE sundial.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		migrations[0].SQL,
		`INSERT INTO sundial.schema_migrations (version, name) VALUES (1, '0001_initial.sql')`,
		`INSERT INTO sundial.invocations (job_id, id, occurrence, status, attempt, manual, triggered_by, message, reason, count, backfill, definition_hash)
			VALUES ('billing/nightly', 'i1', '2026-03-08T09:00:00Z', 'FAILED', 1, false, '', 'exit status 1', '', 1, false, '')`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	invs, _, err := s.ProjectInvocations(ctx, "billing", store.InvocationFilter{Class: store.ClassFailed}, store.Page{})
	if err != nil || len(invs) != 1 || invs[0].ID != "i1" {
		t.Errorf("the failed records of billing after the migration: %v (%v), want i1", invs, err)
	}
}
