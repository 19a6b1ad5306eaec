package simulate_test

import (
	"testing"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/lab/simulate"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestGuaranteesOnDatastore runs the engine on the cloud shape — the
// Datastore store on the emulator, tasks posted after the commit to a
// queue that behaves as Cloud Tasks does — through a simulated day of
// heavy faults, and fails on any double launch, stuck job or occurrence
// neither run nor recorded as skipped.
func TestGuaranteesOnDatastore(t *testing.T) {
	host := emulatortest.Datastore(t)
	jobs := 24
	if testing.Short() {
		jobs = 8
	}
	rep, err := simulate.Run(t.Context(), simulate.Options{
		Backend: "datastore", DatastoreEmulator: host, Jobs: jobs, Days: 1, Seed: 3, Faults: "heavy",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("double launches %d, stuck jobs %d, unaccounted occurrences %d; report %+v",
			rep.DoubleLaunches, rep.StuckJobs, rep.Unaccounted, rep)
	}
	if rep.OccurrencesDue == 0 || rep.Launches == 0 || rep.StoreCommits == 0 || rep.DatastoreWrites == 0 {
		t.Errorf("nothing was simulated on Datastore: %+v", rep)
	}
	for _, f := range []string{"task_dropped", "task_duplicated", "queue_purged", "downtime", "commit_error_after"} {
		if rep.FaultsInjected[f] == 0 {
			t.Errorf("no %s fault was injected: %v", f, rep.FaultsInjected)
		}
	}
	t.Logf("%+v", rep)
}
