package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// history writes one record per status, a minute apart from t0 on, in
// job "proj/kept" and, with the same ids and times, "proj/other", and
// returns the ids by status.
func history(t *testing.T, s store.Store, statuses ...string) map[string][]string {
	t.Helper()
	byStatus := map[string][]string{}
	for _, jobID := range []string{"proj/kept", "proj/other"} {
		put(t, s, job(jobID))
		var invs []*store.InvocationRecord
		for i, st := range statuses {
			at := t0.Add(time.Duration(i) * time.Minute)
			inv := &store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("r%02d", i), Occurrence: at, Status: st,
				Attempt: 1, Created: at, Log: []byte("attempt 1 " + st + "\n")}
			if st == "SKIPPED" {
				inv.Reason, inv.Count, inv.Last = "overrun", 2, at.Add(30*time.Second)
			}
			invs = append(invs, inv)
			if jobID == "proj/kept" {
				byStatus[st] = append(byStatus[st], inv.ID)
			}
		}
		putInvs(t, s, jobID, invs...)
	}
	return byStatus
}

func expired(t *testing.T, s store.Store, jobID string, r store.Expiry, limit int) []string {
	t.Helper()
	ids, err := s.Expired(t.Context(), jobID, r, limit)
	if err != nil {
		t.Fatalf("Expired(%s, %+v, %d): %v", jobID, r, limit, err)
	}
	slices.Sort(ids) // the order is the backend's (package doc)
	return ids
}

// testExpired: each class's records past the age or beyond the count are
// listed, and no unfinished record ever is, however old.
func testExpired(t *testing.T, s store.Store) {
	// r00..r13, a minute apart; the unfinished ones are the oldest.
	history(t, s, "RUNNING", "QUEUED", "RETRYING", "LAUNCHING",
		"SUCCEEDED", "FAILED", "SKIPPED", "SUCCEEDED", "ABORTED", "SUCCEEDED",
		"FAILED", "SUCCEEDED", "FAILED", "SUCCEEDED")
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	for _, tc := range []struct {
		name  string
		r     store.Expiry
		limit int
		want  []string
	}{
		{"no bound lets nothing go", store.Expiry{}, 100, nil},
		{"age: successes and skips before the cutoff", store.Expiry{Before: at(9)}, 100, []string{"r04", "r06", "r07"}},
		{"age: failures before the cutoff", store.Expiry{Failures: true, Before: at(12)}, 100, []string{"r05", "r08", "r10"}},
		{"age far ahead: every finished record, no unfinished one", store.Expiry{Before: at(1000)}, 100,
			[]string{"r04", "r06", "r07", "r09", "r11", "r13"}},
		{"count: all but the newest two", store.Expiry{Keep: 2}, 100, []string{"r04", "r06", "r07", "r09"}},
		{"count of failures", store.Expiry{Failures: true, Keep: 1}, 100, []string{"r05", "r08", "r10"}},
		{"count above the records lets nothing go", store.Expiry{Keep: 50}, 100, nil},
		{"age and count: the stricter wins (count)", store.Expiry{Before: at(5), Keep: 3}, 100, []string{"r04", "r06", "r07"}},
		{"age and count: the stricter wins (age)", store.Expiry{Before: at(10), Keep: 5}, 100, []string{"r04", "r06", "r07", "r09"}},
		{"a limit of 0 lists nothing", store.Expiry{Before: at(1000)}, 0, nil},
	} {
		if got := expired(t, s, "proj/kept", tc.r, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Expired = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Which 4 of the 6 is the backend's (package doc): any 4, each once.
	finished := []string{"r04", "r06", "r07", "r09", "r11", "r13"}
	got := expired(t, s, "proj/kept", store.Expiry{Before: at(1000)}, 4)
	if len(slices.Compact(slices.Clone(got))) != 4 || slices.ContainsFunc(got, func(id string) bool { return !slices.Contains(finished, id) }) {
		t.Errorf("Expired with limit 4 listed %q, want 4 of %q", got, finished)
	}
	if got := expired(t, s, "proj/none", store.Expiry{Before: at(1000)}, 100); len(got) != 0 {
		t.Errorf("Expired of a job without records = %q", got)
	}
}

// testDeleteInvocation: a finished record goes with its log; an unfinished
// one, an absent one and another job's records stay.
func testDeleteInvocation(t *testing.T, s store.Store) {
	history(t, s, "RUNNING", "SUCCEEDED", "FAILED", "SKIPPED", "QUEUED")
	del := func(ids ...string) {
		t.Helper()
		_, err := s.Update(t.Context(), "proj/kept", func(tx store.Tx) error {
			for _, id := range ids {
				if err := tx.DeleteInvocation(id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("deleting %q: %v", ids, err)
		}
	}
	del("r00", "r01", "r02", "r03", "r04", "absent")
	for id, gone := range map[string]bool{"r00": false, "r01": true, "r02": true, "r03": true, "r04": false} {
		_, err := s.Invocation(t.Context(), "proj/kept", id)
		switch {
		case gone && !errors.Is(err, store.ErrNotFound):
			t.Errorf("finished record %s after its delete: err %v, want ErrNotFound", id, err)
		case !gone && err != nil:
			t.Errorf("unfinished record %s after a delete: %v, want it kept", id, err)
		}
		if _, err := s.Invocation(t.Context(), "proj/other", id); err != nil {
			t.Errorf("record %s of another job after a delete: %v", id, err)
		}
	}
	invs, _, err := s.Invocations(t.Context(), "proj/kept", store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, inv := range invs {
		ids = append(ids, inv.ID)
	}
	if want := []string{"r04", "r00"}; !slices.Equal(ids, want) {
		t.Errorf("Invocations after the deletes = %q, want %q", ids, want)
	}
	// The kept unfinished record can still end, and then go.
	_, err = s.Update(t.Context(), "proj/kept", func(tx store.Tx) error {
		inv, err := tx.Invocation("r00")
		if err != nil {
			return err
		}
		inv.Status = "SUCCEEDED"
		return tx.PutInvocation(inv)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := expired(t, s, "proj/kept", store.Expiry{Before: t0.Add(time.Hour)}, 10); !slices.Equal(got, []string{"r00"}) {
		t.Errorf("Expired after r00 ended = %q, want [r00]", got)
	}
	del("r00")
	if _, err := s.Invocation(t.Context(), "proj/kept", "r00"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("r00 after it ended and was deleted: err %v, want ErrNotFound", err)
	}
}

// testDeleteAfterPutRefused: a record put and deleted in one transaction
// is a caller's mistake, refused whole.
func testDeleteAfterPutRefused(t *testing.T, s store.Store) {
	put(t, s, job("proj/kept"))
	_, err := s.Update(t.Context(), "proj/kept", func(tx store.Tx) error {
		if err := tx.PutInvocation(&store.InvocationRecord{JobID: "proj/kept", ID: "x", Occurrence: t0, Status: "SUCCEEDED"}); err != nil {
			return err
		}
		_ = tx.DeleteInvocation("x")
		return nil
	})
	if err == nil {
		t.Fatal("put and delete of one record in one transaction committed")
	}
	if _, err := s.Invocation(t.Context(), "proj/kept", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused transaction's record: err %v, want ErrNotFound", err)
	}
}
