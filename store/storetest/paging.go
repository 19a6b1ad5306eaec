package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// pageAll follows cursors from the first page and returns every item.
func pageAll[T any](t *testing.T, limit int, list func(p store.Page) ([]T, string, error), between func()) []T {
	t.Helper()
	var all []T
	p := store.Page{Limit: limit}
	for pages := 0; ; pages++ {
		items, next, err := list(p)
		if err != nil {
			t.Fatalf("page %d (limit %d): %v", pages, limit, err)
		}
		if limit > 0 && len(items) > limit {
			t.Fatalf("page %d has %d items, limit %d", pages, len(items), limit)
		}
		all = append(all, items...)
		if next == "" {
			return all
		}
		if len(items) == 0 {
			t.Fatalf("page %d is empty but has a next cursor", pages)
		}
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		if between != nil {
			between()
			between = nil
		}
		p.Cursor = next
	}
}

func testInvocationsPaging(t *testing.T, s store.Store) {
	const jobID = "proj/a"
	put(t, s, job(jobID), job("proj/b"))
	var invs []*store.InvocationRecord
	for i := range 23 {
		// Pairs of equal occurrences: ties must not cause gaps or repeats.
		invs = append(invs, &store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("inv%02d", i), Occurrence: t0.Add(time.Duration(i/2) * time.Minute), Status: "SUCCEEDED"})
	}
	putInvs(t, s, jobID, invs...)
	putInvs(t, s, "proj/b", &store.InvocationRecord{JobID: "proj/b", ID: "inv00", Occurrence: t0.Add(time.Hour), Status: "FAILED"})

	list := func(p store.Page) ([]*store.InvocationRecord, string, error) {
		return s.Invocations(t.Context(), jobID, p)
	}
	checkOrder := func(t *testing.T, got []*store.InvocationRecord) {
		t.Helper()
		seen := map[string]bool{}
		for i, inv := range got {
			if inv.JobID != jobID {
				t.Errorf("listing of %s has an invocation of %s", jobID, inv.JobID)
			}
			if seen[inv.ID] {
				t.Errorf("%s listed twice", inv.ID)
			}
			seen[inv.ID] = true
			if i > 0 && inv.Occurrence.After(got[i-1].Occurrence) {
				t.Errorf("%s (%v) listed after the older %s (%v)", inv.ID, inv.Occurrence, got[i-1].ID, got[i-1].Occurrence)
			}
		}
	}
	for _, limit := range []int{1, 4, 10, 23, 0} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			got := pageAll(t, limit, list, nil)
			checkOrder(t, got)
			if len(got) != len(invs) {
				t.Errorf("listed %d invocations, want %d", len(got), len(invs))
			}
		})
	}

	// Invocations written while paging: every earlier one is still listed
	// exactly once.
	got := pageAll(t, 5, list, func() {
		putInvs(t, s, jobID,
			&store.InvocationRecord{JobID: jobID, ID: "new-newest", Occurrence: t0.Add(time.Hour), Status: "QUEUED"},
			&store.InvocationRecord{JobID: jobID, ID: "new-middle", Occurrence: t0.Add(5 * time.Minute), Status: "QUEUED"},
			&store.InvocationRecord{JobID: jobID, ID: "new-oldest", Occurrence: t0.Add(-time.Hour), Status: "QUEUED"})
	})
	checkOrder(t, got)
	listed := map[string]bool{}
	for _, inv := range got {
		listed[inv.ID] = true
	}
	for _, inv := range invs {
		if !listed[inv.ID] {
			t.Errorf("%s was skipped by a listing during inserts", inv.ID)
		}
	}
	if !listed["new-oldest"] {
		t.Error("an invocation older than the cursor, inserted while paging, was not listed")
	}

	none, next, err := s.Invocations(t.Context(), "proj/none", store.Page{})
	if err != nil || len(none) != 0 || next != "" {
		t.Errorf("Invocations of a job without any = %v, %q, %v; want nothing", none, next, err)
	}
}

func testJobsPaging(t *testing.T, s store.Store) {
	var alpha, all []string
	for _, p := range []struct {
		project string
		n       int
	}{{"alpha", 7}, {"beta", 5}, {"alphabet", 2}} {
		for i := range p.n {
			id := fmt.Sprintf("%s/job%02d", p.project, i)
			put(t, s, job(id))
			all = append(all, id)
			if p.project == "alpha" {
				alpha = append(alpha, id)
			}
		}
	}
	slices.Sort(all)
	ids := func(jobs []*store.JobRecord) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	for _, limit := range []int{1, 3, 7, 0} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			got := pageAll(t, limit, func(p store.Page) ([]*store.JobRecord, string, error) { return s.Jobs(t.Context(), "alpha", p) }, nil)
			if !slices.Equal(ids(got), alpha) {
				t.Errorf("Jobs(alpha) = %q, want %q", ids(got), alpha)
			}
			got = pageAll(t, limit, func(p store.Page) ([]*store.JobRecord, string, error) { return s.Jobs(t.Context(), "", p) }, nil)
			if !slices.Equal(ids(got), all) {
				t.Errorf("Jobs(all) = %q, want %q", ids(got), all)
			}
		})
	}

	// A job created while paging, after the cursor, is listed; those before
	// it are listed once.
	got := pageAll(t, 3, func(p store.Page) ([]*store.JobRecord, string, error) { return s.Jobs(t.Context(), "alpha", p) },
		func() { put(t, s, job("alpha/aaa"), job("alpha/zzz")) })
	if want := append(slices.Clone(alpha), "alpha/zzz"); !slices.Equal(ids(got), want) {
		t.Errorf("Jobs(alpha) during inserts = %q, want %q", ids(got), want)
	}

	none, next, err := s.Jobs(t.Context(), "gamma", store.Page{})
	if err != nil || len(none) != 0 || next != "" {
		t.Errorf("Jobs of an empty project = %v, %q, %v; want nothing", none, next, err)
	}
}

// A cursor is opaque to callers but comes from their requests: one the
// listing did not make is the caller's error, ErrInvalidCursor, and lists
// nothing, whether it is not a cursor at all or another listing's.
func testInvalidCursor(t *testing.T, s store.Store) {
	put(t, s, job("proj/a"), job("proj/b"), job("proj/c"))
	var invs []*store.InvocationRecord
	for i := range 3 {
		invs = append(invs, &store.InvocationRecord{JobID: "proj/a", ID: fmt.Sprintf("inv%d", i), Occurrence: t0.Add(time.Duration(i) * time.Minute), Status: "SUCCEEDED"})
	}
	putInvs(t, s, "proj/a", invs...)
	_, jobsCursor, err := s.Jobs(t.Context(), "", store.Page{Limit: 1})
	if err != nil || jobsCursor == "" {
		t.Fatalf("first page of Jobs: cursor %q, error %v; want a next page", jobsCursor, err)
	}
	_, invsCursor, err := s.Invocations(t.Context(), "proj/a", store.Page{Limit: 1})
	if err != nil || invsCursor == "" {
		t.Fatalf("first page of Invocations: cursor %q, error %v; want a next page", invsCursor, err)
	}
	listings := []struct {
		name        string
		list        func(cursor string) (int, error)
		otherCursor string
	}{
		{"Jobs", func(c string) (int, error) {
			jobs, _, err := s.Jobs(t.Context(), "", store.Page{Cursor: c})
			return len(jobs), err
		}, invsCursor},
		{"Invocations", func(c string) (int, error) {
			invs, _, err := s.Invocations(t.Context(), "proj/a", store.Page{Cursor: c})
			return len(invs), err
		}, jobsCursor},
	}
	for _, l := range listings {
		for _, tc := range []struct{ name, cursor string }{
			{"not base64", "not a cursor!"},
			{"base64 of no cursor", "Z2FyYmFnZQ"},
			{"the other listing's cursor", l.otherCursor},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				n, err := l.list(tc.cursor)
				if !errors.Is(err, store.ErrInvalidCursor) {
					t.Errorf("%s with cursor %q: error %v, want ErrInvalidCursor", l.name, tc.cursor, err)
				}
				if n != 0 {
					t.Errorf("%s with cursor %q listed %d items, want none", l.name, tc.cursor, n)
				}
			})
		}
	}
}
