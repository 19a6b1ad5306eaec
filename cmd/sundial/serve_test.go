package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
)

// The embedded default survives kill -9: ten jobs fire every second and
// call a receiver that answers slowly, so launches are in flight when the
// process is killed. A restart on the same database takes over the dead
// process's work at once (its lock tells it is dead), every job fires
// again within 5 s, no occurrence reaches the receiver twice, the launch
// that was in flight ends under the fail-closed rule, and every occurrence
// of the whole run is accounted for: launched, or recorded as skipped with
// a reason.
func TestServeSurvivesKill9(t *testing.T) {
	t.Parallel()
	const jobs = 10
	recv := newReceiver(t, 400*time.Millisecond)
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "e2e", everySecond(jobs, recv.URL))
	db := filepath.Join(dir, "sundial.db")
	args := []string{"--db", db, "--config-dir", configs}

	first := serve(t, args...)
	recv.waitFor(t, time.Minute, "three launches of every job", func(hits []hit) bool {
		return minPerJob(hits, jobs, time.Time{}) >= 3
	})
	// Kill while the receiver holds a launch unanswered, so that one is in
	// flight: its launch written, the target called, its outcome never
	// recorded.
	inFlight := recv.holdNext(t, time.Minute)
	first.kill(t)
	// Stay down for a few occurrences, so that the restart finds missed
	// ones to record.
	time.Sleep(3 * time.Second)

	restarted := time.Now()
	second := serve(t, args...)
	hits := recv.waitFor(t, time.Minute, "every job to fire again after the restart", func(hits []hit) bool {
		return minPerJob(hits, jobs, restarted) >= 1
	})
	for job, at := range firstAfter(hits, restarted) {
		if late := at.Sub(restarted); late > 5*time.Second {
			t.Errorf("%s fired again %v after the restart; want within 5s", job, late.Round(time.Millisecond))
		}
	}
	recv.waitFor(t, time.Minute, "three more launches of every job", func(hits []hit) bool {
		return minPerJob(hits, jobs, restarted) >= 3
	})
	second.stop(t)

	hits, _ = recv.snapshot()
	for _, h := range hits {
		if h.job == "" || h.scheduled == "" || h.key == "" || h.attempt == "" {
			t.Errorf("a request without the Sundial headers: %+v", h)
		}
	}
	seen := onceEach(t, hits)

	st, err := sqlite.Open(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := withTimeout(t, time.Minute)
	for i := range jobs {
		jobID := fmt.Sprintf("e2e/j%d", i)
		invs := allInvocations(t, ctx, st, jobID)
		checkAccounted(t, jobID, invs, seen)
		// Catch-up runs the latest missed occurrence if it is late by less
		// than the engine's tolerance, and records the others.
		if !slices.ContainsFunc(invs, func(inv *store.InvocationRecord) bool { return inv.Reason == "missed" || inv.Reason == "superseded" }) {
			t.Errorf("%s: no occurrence recorded as missed or superseded across 3 s of downtime", jobID)
		}
	}
	inv, err := st.Invocation(ctx, inFlight.job, invocationOf(t, ctx, st, inFlight))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Status != "FAILED" || !strings.Contains(inv.Message, "launch outcome unknown") {
		t.Errorf("the launch in flight at the kill (%s %s) ended %s %q; want FAILED: launch outcome unknown",
			inFlight.job, inFlight.scheduled, inv.Status, inv.Message)
	}
}

// minPerJob is the fewest hits any of the n jobs got at or after since.
func minPerJob(hits []hit, n int, since time.Time) int {
	count := map[string]int{}
	for _, h := range hits {
		if !h.at.Before(since) {
			count[h.job]++
		}
	}
	least := -1
	for i := range n {
		c := count[fmt.Sprintf("e2e/j%d", i)]
		if least < 0 || c < least {
			least = c
		}
	}
	return least
}

// firstAfter is, by job, when its first hit after since arrived.
func firstAfter(hits []hit, since time.Time) map[string]time.Time {
	first := map[string]time.Time{}
	for _, h := range hits {
		if at, ok := first[h.job]; h.at.After(since) && (!ok || h.at.Before(at)) {
			first[h.job] = h.at
		}
	}
	return first
}

func allInvocations(t *testing.T, ctx context.Context, st store.Store, jobID string) []*store.InvocationRecord {
	t.Helper()
	var all []*store.InvocationRecord
	for cursor := ""; ; {
		page, next, err := st.Invocations(ctx, jobID, store.Page{Cursor: cursor, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// checkAccounted checks that every second from the job's first occurrence
// to its last is an invocation or inside a skipped record, that every
// skipped record has a reason, and that every occurrence the receiver saw
// has an invocation that is not SKIPPED.
func checkAccounted(t *testing.T, jobID string, invs []*store.InvocationRecord, seen map[string]hit) {
	t.Helper()
	covered := map[int64]string{}
	var lo, hi int64
	for _, inv := range invs {
		if inv.Manual {
			continue
		}
		first, last := inv.Occurrence.Unix(), inv.Occurrence.Unix()
		if inv.Status == "SKIPPED" {
			if inv.Reason == "" {
				t.Errorf("%s: skipped record at %v without a reason", jobID, inv.Occurrence)
			}
			if !inv.Last.IsZero() {
				last = inv.Last.Unix()
			}
		}
		for s := first; s <= last; s++ {
			if prev, ok := covered[s]; ok {
				t.Errorf("%s: occurrence %v recorded twice: %s and %s", jobID, time.Unix(s, 0).UTC(), prev, inv.Status)
			}
			covered[s] = inv.Status
		}
		if lo == 0 || first < lo {
			lo = first
		}
		hi = max(hi, last)
	}
	if len(covered) == 0 {
		t.Fatalf("%s: no invocations recorded", jobID)
	}
	var missing []string
	for s := lo; s <= hi; s++ {
		if _, ok := covered[s]; !ok {
			missing = append(missing, time.Unix(s, 0).UTC().Format(time.TimeOnly))
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s: occurrences neither launched nor recorded as skipped: %v", jobID, missing)
	}
	for occ, h := range seen {
		if h.job != jobID {
			continue
		}
		at, err := time.Parse(time.RFC3339, h.scheduled)
		if err != nil {
			t.Errorf("%s: Sundial-Scheduled-Time %q: %v", occ, h.scheduled, err)
			continue
		}
		if status, ok := covered[at.Unix()]; !ok || status == "SKIPPED" {
			t.Errorf("%s reached the receiver but is recorded as %q", occ, status)
		}
	}
	statuses := map[string]int{}
	for _, inv := range invs {
		statuses[inv.Status+" "+inv.Reason]++
	}
	t.Logf("%s: %d seconds accounted for; records by status: %v", jobID, hi-lo+1, statuses)
}

// invocationOf finds the id of the invocation a hit was a launch of.
func invocationOf(t *testing.T, ctx context.Context, st store.Store, h hit) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339, h.scheduled)
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range allInvocations(t, ctx, st, h.job) {
		if inv.Occurrence.Equal(at) && inv.Status != "SKIPPED" {
			return inv.ID
		}
	}
	t.Fatalf("no invocation of %s at %v", h.job, at)
	return ""
}

// SIGTERM stops taking new tasks but lets a running invocation finish
// within the stop grace: the launch in flight at the signal is recorded as
// it ended, not left for the next start to settle.
func TestServeStopWaitsForRunningInvocations(t *testing.T) {
	t.Parallel()
	recv := newReceiver(t, 0)
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "e2e", everySecond(1, recv.URL))
	db := filepath.Join(dir, "sundial.db")
	s := serve(t, "--db", db, "--config-dir", configs, "--stop-grace", "1m")

	held := recv.holdNext(t, time.Minute)
	s.cmd.Process.Signal(syscall.SIGTERM)
	// Answer the held request only once the server is surely stopping.
	waitUntil(t, time.Minute, "the server to log that it is stopping", func() bool {
		return strings.Contains(s.log.String(), `"msg":"stopping`)
	})
	recv.release()
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		t.Fatal("sundial serve did not stop within a minute of SIGTERM")
	}
	if s.err != nil {
		t.Errorf("sundial serve exited with %v after SIGTERM", s.err)
	}

	st, err := sqlite.Open(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := withTimeout(t, time.Minute)
	inv, err := st.Invocation(ctx, held.job, invocationOf(t, ctx, st, held))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Status != "SUCCEEDED" {
		t.Errorf("the invocation running at SIGTERM ended %s %q; want SUCCEEDED", inv.Status, inv.Message)
	}
}
