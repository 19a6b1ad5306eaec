package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// statuses are every status a record has, each with its class.
var statuses = map[string]string{
	"QUEUED": store.ClassRunning, "LAUNCHING": store.ClassRunning, "RUNNING": store.ClassRunning, "RETRYING": store.ClassRunning,
	"SUCCEEDED": store.ClassSucceeded, "FAILED": store.ClassFailed, "ABORTED": store.ClassFailed, "SKIPPED": store.ClassSkipped,
}

// projectHistory stores records of three jobs of project p, the
// statuses in turn, and records of projects q and pa (a project whose
// name starts with p's), which no listing of p may show. Occurrences are
// a minute apart, and each of p's minutes has two records of two jobs:
// ties across jobs. It returns p's records.
func projectHistory(t *testing.T, s store.Store) []*store.InvocationRecord {
	order := []string{"QUEUED", "SUCCEEDED", "FAILED", "LAUNCHING", "SKIPPED", "ABORTED", "RUNNING", "SUCCEEDED", "RETRYING", "FAILED"}
	jobs := []string{"p/a", "p/b", "p/c"}
	put(t, s, job("p/a"), job("p/b"), job("p/c"), job("q/a"), job("pa/a"))
	byJob := map[string][]*store.InvocationRecord{}
	var all []*store.InvocationRecord
	for i := range 24 {
		jobID := jobs[i%3]
		inv := &store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("r%02d", i), Occurrence: t0.Add(time.Duration(i/2) * time.Minute),
			Status: order[i%len(order)], Attempt: 1, Message: "m", Log: []byte("a log line"), DefinitionHash: "h"}
		byJob[jobID] = append(byJob[jobID], inv)
		all = append(all, inv)
	}
	for _, id := range jobs {
		putInvs(t, s, id, byJob[id]...)
	}
	for _, other := range []string{"q/a", "pa/a"} {
		putInvs(t, s, other, &store.InvocationRecord{JobID: other, ID: "r00", Occurrence: t0.Add(5 * time.Minute), Status: "FAILED", DefinitionHash: "h"})
	}
	return all
}

// newestFirst is want in the listing's order, ties in any order: the
// keys the listing is checked against.
func newestFirst(invs []*store.InvocationRecord) []string {
	sorted := slices.Clone(invs)
	slices.SortStableFunc(sorted, func(a, b *store.InvocationRecord) int { return b.Occurrence.Compare(a.Occurrence) })
	var keys []string
	for _, inv := range sorted {
		keys = append(keys, inv.JobID+" "+inv.ID)
	}
	return keys
}

// checkListing pages through the listing with limit and checks it lists
// exactly want, newest first, each once, without blobs.
func checkListing(t *testing.T, s store.Store, project string, f store.InvocationFilter, limit int, want []*store.InvocationRecord) {
	t.Helper()
	got := pageAll(t, limit, func(p store.Page) ([]*store.InvocationRecord, string, error) {
		return s.ProjectInvocations(t.Context(), project, f, p)
	}, nil)
	var keys []string
	for i, inv := range got {
		keys = append(keys, inv.JobID+" "+inv.ID)
		if i > 0 && inv.Occurrence.After(got[i-1].Occurrence) {
			t.Errorf("%+v: %s %s listed after the older %s %s", f, inv.JobID, inv.ID, got[i-1].JobID, got[i-1].ID)
		}
		if inv.Log != nil || inv.Definition != nil {
			t.Errorf("%+v: %s %s is listed with its blobs", f, inv.JobID, inv.ID)
		}
	}
	wantKeys := newestFirst(want)
	if !slices.Equal(sortedCopy(keys), sortedCopy(wantKeys)) || len(keys) != len(wantKeys) {
		t.Errorf("ProjectInvocations(%s, %+v, limit %d) = %q\nwant %q", project, f, limit, keys, wantKeys)
	}
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func pick(invs []*store.InvocationRecord, keep func(*store.InvocationRecord) bool) []*store.InvocationRecord {
	return slices.DeleteFunc(slices.Clone(invs), func(inv *store.InvocationRecord) bool { return !keep(inv) })
}

func testProjectInvocations(t *testing.T, s store.Store) {
	all := projectHistory(t, s)
	for _, limit := range []int{1, 5, 0} {
		checkListing(t, s, "p", store.InvocationFilter{}, limit, all)
	}
	for _, class := range store.StatusClasses {
		checkListing(t, s, "p", store.InvocationFilter{Class: class}, 2, pick(all, func(inv *store.InvocationRecord) bool { return statuses[inv.Status] == class }))
	}
	since := t0.Add(7 * time.Minute)
	checkListing(t, s, "p", store.InvocationFilter{Since: since}, 3, pick(all, func(inv *store.InvocationRecord) bool { return !inv.Occurrence.Before(since) }))
	checkListing(t, s, "p", store.InvocationFilter{Since: since, Class: store.ClassFailed}, 1,
		pick(all, func(inv *store.InvocationRecord) bool {
			return !inv.Occurrence.Before(since) && statuses[inv.Status] == store.ClassFailed
		}))
	checkListing(t, s, "p", store.InvocationFilter{JobID: "p/b"}, 2, pick(all, func(inv *store.InvocationRecord) bool { return inv.JobID == "p/b" }))
	checkListing(t, s, "p", store.InvocationFilter{JobID: "p/b", Class: store.ClassSucceeded, Since: t0.Add(3 * time.Minute)}, 1,
		pick(all, func(inv *store.InvocationRecord) bool {
			return inv.JobID == "p/b" && inv.Status == "SUCCEEDED" && !inv.Occurrence.Before(t0.Add(3*time.Minute))
		}))
	checkListing(t, s, "p", store.InvocationFilter{Since: t0.Add(time.Hour)}, 0, nil)
	checkListing(t, s, "p", store.InvocationFilter{JobID: "p/none"}, 0, nil)
	checkListing(t, s, "none", store.InvocationFilter{}, 0, nil)
	checkListing(t, s, "q", store.InvocationFilter{}, 0, []*store.InvocationRecord{{JobID: "q/a", ID: "r00", Occurrence: t0.Add(5 * time.Minute)}})

	if invs, _, err := s.ProjectInvocations(t.Context(), "p", store.InvocationFilter{JobID: "q/a"}, store.Page{}); err == nil {
		t.Errorf("ProjectInvocations of p with a job of q listed %d records, want an error", len(invs))
	}
}

// A record whose status moves to another class moves with it, and one
// deleted leaves every listing.
func testProjectInvocationsFollowStatus(t *testing.T, s store.Store) {
	put(t, s, job("p/a"))
	inv := &store.InvocationRecord{JobID: "p/a", ID: "r1", Occurrence: t0, Status: "RUNNING", DefinitionHash: "h"}
	putInvs(t, s, "p/a", inv)
	check := func(class string, want int) {
		t.Helper()
		for _, f := range []store.InvocationFilter{{Class: class}, {Class: class, JobID: "p/a"}} {
			got, _, err := s.ProjectInvocations(t.Context(), "p", f, store.Page{})
			if err != nil || len(got) != want {
				t.Errorf("ProjectInvocations(p, %+v) = %d records, %v; want %d", f, len(got), err, want)
			}
		}
	}
	check(store.ClassRunning, 1)
	done := *inv
	done.Status = "SUCCEEDED"
	putInvs(t, s, "p/a", &done)
	check(store.ClassRunning, 0)
	check(store.ClassSucceeded, 1)
	if _, err := s.Update(t.Context(), "p/a", func(tx store.Tx) error { return tx.DeleteInvocation("r1") }); err != nil {
		t.Fatal(err)
	}
	check(store.ClassSucceeded, 0)
}

// A cursor the listing did not make, garbage or another listing's, is
// ErrInvalidCursor and lists nothing.
func testProjectInvocationsCursor(t *testing.T, s store.Store) {
	projectHistory(t, s)
	_, jobsCursor, err := s.Jobs(t.Context(), "", store.Page{Limit: 1})
	if err != nil || jobsCursor == "" {
		t.Fatalf("first page of Jobs: cursor %q, error %v", jobsCursor, err)
	}
	for _, c := range []string{"not a cursor!", "Z2FyYmFnZQ", jobsCursor} {
		invs, _, err := s.ProjectInvocations(t.Context(), "p", store.InvocationFilter{}, store.Page{Cursor: c})
		if !errors.Is(err, store.ErrInvalidCursor) || len(invs) != 0 {
			t.Errorf("ProjectInvocations with cursor %q = %d records, %v; want ErrInvalidCursor", c, len(invs), err)
		}
	}
}
