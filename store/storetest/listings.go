package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

func testOverdue(t *testing.T, s store.Store) {
	now := t0
	wd := map[string]time.Time{
		"proj/3h":    now.Add(-3 * time.Hour),
		"proj/2h":    now.Add(-2 * time.Hour),
		"proj/1us":   now.Add(-time.Microsecond),
		"proj/now":   now,
		"proj/later": now.Add(time.Microsecond),
		"proj/zero":  {},
		"other/1h":   now.Add(-time.Hour),
	}
	for id, ts := range wd {
		j := job(id)
		j.WatchdogTimerTs = ts
		put(t, s, j)
	}
	check := func(at time.Time, limit int, want ...string) {
		t.Helper()
		got, err := s.Overdue(t.Context(), at, limit)
		if err != nil {
			t.Fatalf("Overdue(%v, %d): %v", at, limit, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Overdue(%v, %d) = %q, want %q", at, limit, got, want)
		}
	}
	check(now, 10, "proj/3h", "proj/2h", "other/1h", "proj/1us", "proj/now")
	check(now, 2, "proj/3h", "proj/2h")
	check(now.Add(-90*time.Minute), 10, "proj/3h", "proj/2h")
	check(now.Add(-4*time.Hour), 10)

	// A job that stops waiting leaves the listing.
	j := job("proj/3h")
	put(t, s, j)
	check(now, 10, "proj/2h", "other/1h", "proj/1us", "proj/now")
}

func testRecent(t *testing.T, s store.Store) {
	ctx := t.Context()
	inv := func(jobID string, i int) *store.InvocationRecord {
		return &store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("inv-%03d", i), Occurrence: t0.Add(time.Duration(i) * time.Minute),
			Status: "SUCCEEDED", Message: fmt.Sprintf("run %d", i), Log: []byte("a log line"), DefinitionHash: "h"}
	}
	var many []*store.InvocationRecord
	for i := range 25 {
		many = append(many, inv("p/many", i))
	}
	put(t, s, job("p/many"), job("p/few"), job("p/none"), job("q/other"))
	putInvs(t, s, "p/many", many...)
	putInvs(t, s, "p/few", inv("p/few", 3), inv("p/few", 1))
	putInvs(t, s, "q/other", inv("q/other", 7))

	got, err := s.Recent(ctx, []string{"p/many", "p/few", "p/none", "p/missing", "p/many"}, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"p/many": nil, "p/few": {3, 1}}
	for i := 24; i >= 5; i-- {
		want["p/many"] = append(want["p/many"], i)
	}
	if len(got) != len(want) {
		t.Errorf("Recent answered for %d jobs, want %d (p/many and p/few; not p/none, p/missing, nor q/other, which was not named)", len(got), len(want))
	}
	for jobID, idx := range want {
		if len(got[jobID]) != len(idx) {
			t.Errorf("%s: %d invocations, want %d", jobID, len(got[jobID]), len(idx))
			continue
		}
		for k, i := range idx {
			g, w := got[jobID][k], inv(jobID, i)
			if g.Log != nil || g.Definition != nil {
				t.Errorf("%s %s: Recent read the log or legacy definition; a strip shows neither", jobID, g.ID)
			}
			w.Log = nil
			if !sameInvocation(g, w) {
				t.Errorf("%s [%d] = %+v, want %+v", jobID, k, g, w)
			}
		}
	}
	if _, err := s.Recent(ctx, []string{"p/many"}, store.MaxRecent+1); err == nil {
		t.Errorf("Recent with n = %d: no error, want one (at most %d)", store.MaxRecent+1, store.MaxRecent)
	}
}
