package sqlite

import (
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// pageSorts are the sorts of a subquery's rows, a class's page, in a plan.
var pageSorts = regexp.MustCompile(`SCAN \(subquery-\d+\); USE TEMP B-TREE FOR ORDER BY`)

// TestProjectInvocationsWalkAnIndexInOrder: every form of the listing of
// a project's invocations is a search of an index in the listing's order
// (for every class, one search of each class's), with no sort of what it
// found but of the at most four pages the classes' searches give: a page
// costs its rows (across the project) or at most one job's rows (for a
// job), not the project's history.
func TestProjectInvocationsWalkAnIndexInOrder(t *testing.T) {
	t.Parallel()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cursor := encodeCursor("p", "1767225600000000000\x00p/a\x00r1")
	for _, tt := range []struct {
		f        store.InvocationFilter
		cursor   string
		want     string
		searches int
	}{
		{store.InvocationFilter{}, "", "invocations_project_class (project=? AND class=?", 4},
		{store.InvocationFilter{Since: since}, cursor, "invocations_project_class (project=? AND class=?", 4},
		{store.InvocationFilter{Class: store.ClassFailed}, "", "invocations_project_class (project=? AND class=?", 1},
		{store.InvocationFilter{Class: store.ClassRunning, Since: since}, cursor, "invocations_project_class (project=? AND class=?", 1},
		{store.InvocationFilter{JobID: "p/a"}, cursor, "invocations_newest (job_id=?", 1},
		{store.InvocationFilter{JobID: "p/a", Class: store.ClassSkipped, Since: since}, cursor, "invocations_newest (job_id=?", 1},
	} {
		q, args, err := projectQuery("p", tt.f, tt.cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
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
		// The merge of the classes sorts each one's page, a bounded
		// number of rows; nothing else may be sorted.
		unmerged := pageSorts.ReplaceAllString(got, "")
		if strings.Count(got, "USING INDEX "+tt.want) != tt.searches || strings.Count(got, "SEARCH") != tt.searches || strings.Contains(got, "SCAN i") || strings.Contains(unmerged, "TEMP B-TREE") {
			t.Errorf("plan of %+v (cursor %v) is %q, want %d searches of %s) and no sort of what they find", tt.f, tt.cursor != "", got, tt.searches, tt.want)
		}
	}
}

// TestRecordsWrittenBeforeTheListingAreListed: the project and class
// columns are computed from every row, and CREATE INDEX takes in the rows
// already there: rows a release before the listing wrote (a file at the
// schema version before it) are listed, each in its class, once this
// release has opened the file.
func TestRecordsWrittenBeforeTheListingAreListed(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	before := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "invocations_project_class") })
	if before < 0 {
		t.Fatal("no migration creates invocations_project_class")
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
	for i, row := range []struct{ job, status string }{{"p/a", "RUNNING"}, {"p/b", "FAILED"}, {"p/a", "ABORTED"}, {"pa/a", "FAILED"}, {"p/b", "SUCCEEDED"}} {
		if _, err := db.Exec(`INSERT INTO invocations (job_id, id, occurrence, status, attempt, manual, message, reason, count)
			VALUES (?, ?, ?, ?, 1, 0, '', '', 0)`, row.job, fmt.Sprintf("r%d", i), at.Add(time.Duration(i)*time.Hour).UnixNano(), row.status); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path, Options{}, testHooks{})
	for _, tt := range []struct {
		class string
		want  []string
	}{{"", []string{"r4", "r2", "r1", "r0"}}, {store.ClassFailed, []string{"r2", "r1"}}, {store.ClassRunning, []string{"r0"}}, {store.ClassSucceeded, []string{"r4"}}} {
		invs, _, err := s.ProjectInvocations(t.Context(), "p", store.InvocationFilter{Class: tt.class}, store.Page{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, inv := range invs {
			ids = append(ids, inv.ID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("ProjectInvocations(p, class %q) of rows written before the listing = %q, want %q", tt.class, ids, tt.want)
		}
	}
}
