package postgres

import (
	"strings"
	"testing"
)

// TestInvocationsAreReadByKey: the statement that reads a round trip's
// invocations finds each by the primary key, in the plan PostgreSQL keeps
// for a prepared statement (a generic one, not knowing how many keys),
// on a table of a busy server's size: a read costs its rows, not the
// history.
func TestInvocationsAreReadByKey(t *testing.T) {
	t.Parallel()
	s := open(t)
	if _, err := s.pool.Exec(t.Context(), `INSERT INTO sundial.invocations (job_id, id, occurrence, status, attempt, manual, triggered_by,
			message, reason, count, backfill, definition_hash)
		SELECT 'p/job-' || (n % 1000), 'r' || n, now(), 'SUCCEEDED', 1, false, '', '', '', 1, false, ''
		FROM generate_series(1, 100000) n;
		ANALYZE sundial.invocations`); err != nil {
		t.Fatal(err)
	}
	conn := planner(t, s, "SET plan_cache_mode = force_generic_plan")
	got := strings.Join(explain(t, conn, "EXPLAIN (COSTS OFF) "+readInvocations, []string{"p/job-1", "p/job-2"}, []string{"r1", "r2"}), "\n")
	if !strings.Contains(got, "Index Scan using invocations_pkey") || strings.Contains(got, "Seq Scan") {
		t.Errorf("plan of the invocations' read:\n%s\nwant each found by invocations_pkey, no scan of the table", got)
	}
}
