package sqlite

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// TestExpiredQueriesUseTheClassIndexes: retention's queries are served by
// the partial index of their class, so their cost is what they return (plus
// Keep index entries), not the job's history, and unfinished records are
// not even in the index they read.
func TestExpiredQueriesUseTheClassIndexes(t *testing.T) {
	t.Parallel()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	for failures, index := range map[bool]string{false: "invocations_done", true: "invocations_failed"} {
		kept, list := expiryQueries(failures)
		for _, q := range []struct {
			sql  string
			args []any
		}{{kept, []any{"p/j", 10}}, {list, []any{"p/j", int64(1), 10}}} {
			rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q.sql, q.args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			got := strings.Join(plan, "; ")
			if !strings.Contains(got, "USING COVERING INDEX "+index+" (job_id=?") || strings.Contains(got, "TEMP B-TREE") {
				t.Errorf("plan of %q is %q, want a search of %s by job_id and no sort", q.sql, got, index)
			}
		}
	}
}

// TestRecordsWrittenBeforeRetentionAreFound: SQLite has no gap like
// Datastore's records without Expiry. The retention indexes are partial
// indexes on status, a column every row has, and CREATE INDEX takes in the
// rows already there: rows a release before retention wrote (a file at
// the schema version before the retention indexes) are found by Expired
// once this release has opened the file, and an unfinished one is not.
func TestRecordsWrittenBeforeRetentionAreFound(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	before := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "invocations_done") })
	if before < 0 {
		t.Fatal("no migration creates invocations_done")
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:before] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", before)); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, status := range []string{"RUNNING", "SUCCEEDED", "SKIPPED", "FAILED", "ABORTED", "SUCCEEDED"} {
		if _, err := db.Exec(`INSERT INTO invocations (job_id, id, occurrence, status, attempt, manual, message, reason, count)
			VALUES ('p/old', ?, ?, ?, 1, 0, '', '', 0)`, fmt.Sprintf("r%d", i), at.Add(time.Duration(i)*time.Hour).UnixNano(), status); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path, Options{}, testHooks{})
	for _, tt := range []struct {
		failures bool
		want     []string
	}{{false, []string{"r1", "r2", "r5"}}, {true, []string{"r3", "r4"}}} {
		ids, err := s.Expired(t.Context(), "p/old", store.Expiry{Failures: tt.failures, Before: at.Add(24 * time.Hour)}, 100)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, tt.want) {
			t.Errorf("Expired(failures=%v) of rows written before retention = %q, want %q", tt.failures, ids, tt.want)
		}
	}
}
