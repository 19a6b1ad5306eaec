package sqlite

import (
	"strings"
	"testing"
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
