package postgres

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sundial-cron/sundial/store"
)

// sortNode is a Sort in a plan's text (not a Merge Append's Sort Key).
var sortNode = regexp.MustCompile(`(?m)^\s*(->\s+)?(Incremental )?Sort\s*$`)

// TestProjectInvocationsWalkAnIndexInOrder: each page of the listing is
// read from an index in its order, invocations_project_class across the
// project (one search a class), invocations_newest for a job, with no
// sort of what the searches find (the classes' pages are merged as they
// come): a page costs its rows, not the project's history. The tables of a test
// are small, where PostgreSQL rightly prefers to scan them; with scans
// and sorts made dear, a plan that still scans or sorts is one the
// indexes cannot serve.
func TestProjectInvocationsWalkAnIndexInOrder(t *testing.T) {
	t.Parallel()
	s := open(t)
	conn := planner(t, s, "SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off")
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cursor := encodeCursor("p", "1767225600000000\x00p/a\x00r1")
	for _, tt := range []struct {
		f        store.InvocationFilter
		cursor   string
		index    string
		searches int
	}{
		{store.InvocationFilter{}, "", "invocations_project_class", 4},
		{store.InvocationFilter{Since: since}, cursor, "invocations_project_class", 4},
		{store.InvocationFilter{Class: store.ClassFailed}, "", "invocations_project_class", 1},
		{store.InvocationFilter{Class: store.ClassRunning, Since: since}, cursor, "invocations_project_class", 1},
		{store.InvocationFilter{JobID: "p/a"}, cursor, "invocations_newest", 1},
		{store.InvocationFilter{JobID: "p/a", Class: store.ClassSkipped, Since: since}, cursor, "invocations_newest", 1},
	} {
		q, args, err := projectQuery("p", tt.f, tt.cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(explain(t, conn, "EXPLAIN (COSTS OFF) "+q, args...), "\n")
		// The classes' pages come out of their searches in order, and a
		// Merge Append merges them as they come.
		if strings.Count(got, "Index Scan using "+tt.index+" ") != tt.searches || strings.Contains(got, "Seq Scan") || sortNode.MatchString(got) {
			t.Errorf("plan of %+v (cursor %v):\n%s\nwant %d searches of %s and no sort of what they find", tt.f, tt.cursor != "", got, tt.searches, tt.index)
		}
	}
}

// planner is a connection of s with the planner settings set, for the
// test's EXPLAINs; the test's end resets them and releases it.
func planner(t *testing.T, s *Store, set string) *pgxpool.Conn {
	t.Helper()
	conn, err := s.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), "RESET ALL")
		conn.Release()
	})
	if _, err := conn.Exec(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	return conn
}

// explain runs an EXPLAIN and returns its plan's lines.
func explain(t *testing.T, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args ...any) []string {
	t.Helper()
	rows, err := q.Query(t.Context(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return plan
}
