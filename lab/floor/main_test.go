package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestFloorWritesWhatALaunchWrites runs two measured seconds of a small
// floor and reads the file back: each launch left one finished record,
// each job exactly one tick task, and a dropped index is gone.
func TestFloorWritesWhatALaunchWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "floor.db")
	r, err := run(context.Background(), config{Jobs: 600, Batch: 7, Seconds: 2, Queue: true, Drop: []string{"invocations_done"}, DB: path, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	if r.Launches < 10 || r.CPUPer1k <= 0 || r.LastTickMaxS <= 0 || r.BurstMaxS < r.LastTickMaxS {
		t.Fatalf("report %+v: want launches, CPU and a last tick before the burst's end", r)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(query string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := count("SELECT count(*) FROM invocations WHERE status = 'SUCCEEDED'"); got != r.Launches {
		t.Errorf("%d finished records, want one for each of %d launches", got, r.Launches)
	}
	if got := count("SELECT count(*) FROM invocations"); got != r.Launches {
		t.Errorf("%d records, want %d", got, r.Launches)
	}
	if got := count("SELECT count(*) FROM tasks"); got != 600 {
		t.Errorf("%d tasks, want each job's next tick: 600", got)
	}
	if got := count("SELECT count(*) FROM tasks WHERE owner IS NOT NULL"); got != 0 {
		t.Errorf("%d tasks still claimed, want none", got)
	}
	if got := count("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'invocations_done'"); got != 0 {
		t.Error("invocations_done is still there")
	}
}
