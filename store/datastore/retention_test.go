package datastore

import (
	"fmt"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// TestRetentionCostFollowsWhatItDeletes: finding and deleting 10 expired
// records of a job with a long history reads about as much as the 10, and
// its unfinished or failed records are not read at all: the queries read
// the Expiry index, not the history.
func TestRetentionCostFollowsWhatItDeletes(t *testing.T) {
	t.Parallel()
	counter := &Counter{}
	s := openStore(t, Options{}, counter)
	const jobID = "proj/long"
	at := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	if _, err := s.Update(t.Context(), jobID, func(tx store.Tx) error {
		return tx.PutJob(&store.JobRecord{ID: jobID, Project: "proj", State: "SCHEDULED"})
	}); err != nil {
		t.Fatal(err)
	}
	// 400 records: every fourth failed, every tenth still running.
	for batch := 0; batch < 400; batch += 100 {
		if _, err := s.Update(t.Context(), jobID, func(tx store.Tx) error {
			for i := batch; i < batch+100; i++ {
				st := "SUCCEEDED"
				switch {
				case i%10 == 0:
					st = "RUNNING"
				case i%4 == 0:
					st = "FAILED"
				}
				inv := &store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("r%04d", i), Occurrence: at.Add(time.Duration(i) * time.Minute), Status: st}
				if err := tx.PutInvocation(inv); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := counter.Cost()
	ids, err := s.Expired(t.Context(), jobID, store.Expiry{Keep: 250}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 10 {
		t.Fatalf("Expired listed %d, want 10", len(ids))
	}
	if _, err := s.Update(t.Context(), jobID, func(tx store.Tx) error {
		for _, id := range ids {
			if err := tx.DeleteInvocation(id); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cost := counter.Cost().Sub(before)
	t.Logf("retention of 10 of a 400-record history: %v", cost)
	// The boundary (one projected result), 10 keys, 10 lookups in the
	// transaction; 10 deletes.
	if cost.Reads > 21 || cost.Writes != 10 {
		t.Errorf("deleting 10 records cost %v: want at most 21 reads and 10 writes", cost)
	}
}
