package simulate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sundial-cron/sundial/lab/simulate"
)

// TestGuaranteesUnderFaults runs the engine through a simulated day at
// every fault level with two seeds, and fails on any double launch, stuck
// job or occurrence neither run nor recorded as skipped. It is the test of
// invariants 1, 4 and 5 over the whole system, steps of the host's clock
// included.
func TestGuaranteesUnderFaults(t *testing.T) {
	jobs := 120
	if testing.Short() {
		jobs = 40
	}
	for _, level := range simulate.Levels() {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("%s/seed-%d", level, seed), func(t *testing.T) {
				rep, err := simulate.Run(context.Background(), simulate.Options{Jobs: jobs, Days: 1, Seed: seed, Faults: level, Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				if !rep.OK() {
					t.Errorf("double launches %d, stuck jobs %d, unaccounted occurrences %d; report %+v",
						rep.DoubleLaunches, rep.StuckJobs, rep.Unaccounted, rep)
				}
				if rep.OccurrencesDue == 0 || rep.Launches == 0 {
					t.Errorf("nothing was simulated: %+v", rep)
				}
				if level != "none" && len(rep.FaultsInjected) == 0 {
					t.Errorf("no fault was injected at level %s", level)
				}
				// The host's clock stepped back and forward under the
				// embedded shape, and the guarantees held across.
				if level != "none" && rep.FaultsInjected["clock_step"] == 0 {
					t.Errorf("the clock never stepped at level %s", level)
				}
			})
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []simulate.Options{
		{Jobs: 1, Days: 1, Faults: "apocalyptic"},
		{Jobs: 0, Days: 1, Faults: "none"},
		{Jobs: 1, Days: 0, Faults: "none"},
		{Jobs: 1, Days: 1, Faults: "none", Backend: "postgres"},
		// Never a real database: the datastore backend needs an emulator.
		{Jobs: 1, Days: 1, Faults: "none", Backend: "datastore"},
	} {
		if _, err := simulate.Run(context.Background(), o); !errors.Is(err, simulate.ErrBadOptions) {
			t.Errorf("Run(%+v): error %v, want ErrBadOptions", o, err)
		}
	}
}
