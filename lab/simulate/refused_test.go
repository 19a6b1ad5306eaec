package simulate

import (
	"context"
	"testing"
)

// TestRefusedRepairIsNoStuckJob: a pass whose repairs of a job the
// injected faults all refuse starts that job's wait over, as a restart
// does; the run then finds no job stuck. Half of all commits fail and half
// of all tasks are lost, so the watchdog alone moves many jobs and each of
// its repairs is refused with odds of 1 in 8: a day of 30 jobs has
// hundreds of refused passes, and before the wait started over a good
// part of them made a job stuck.
func TestRefusedRepairIsNoStuckJob(t *testing.T) {
	levels["refusing"] = faults{CommitBefore: 0.5, Drop: 0.5}
	defer delete(levels, "refusing")
	rep, err := Run(context.Background(), Options{Jobs: 30, Days: 1, Seed: 3, Faults: "refusing", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RepairsRefused == 0 {
		t.Fatalf("no pass had its repairs refused; the test tests nothing: %+v", rep)
	}
	if rep.StuckJobs != 0 {
		t.Errorf("%d stuck jobs after %d refused repairs; first: %+v", rep.StuckJobs, rep.RepairsRefused, rep.Stuck[0])
	}
}
