package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/deploy/gcpsetup/schedulertest"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
)

// TestSetupGCP runs the verb against the in-test Cloud Tasks and Cloud
// Scheduler servers: a dry run, a first run, a second run, and bad input.
func TestSetupGCP(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC) }
	tasks, err := cloudtaskstest.Start(cloudtaskstest.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tasks.Close)
	sched, err := schedulertest.Start(now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sched.Close)
	// Every setting is given, so the environment of the machine running
	// the test cannot change what it does.
	flags := func(extra ...string) []string {
		return append([]string{"setup-gcp", "--gcp-project=sundial-test", "--location=europe-west1", "--queue=sundial-tasks",
			"--public-url=https://sundial.example", "--invoker=invoker@sundial-test.iam.gserviceaccount.com",
			"--tasks-endpoint=" + tasks.Addr(), "--scheduler-endpoint=" + sched.Addr()}, extra...)
	}
	const (
		queue    = "queue projects/sundial-test/locations/europe-west1/queues/sundial-tasks: "
		watchdog = "scheduler job projects/sundial-test/locations/europe-west1/jobs/sundial-watchdog: "
		refresh  = "scheduler job projects/sundial-test/locations/europe-west1/jobs/sundial-refresh: "
	)
	writes := func() int { return len(tasks.QueueWrites()) + len(sched.Writes()) }

	for _, step := range []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string
		wantErr    string
		wantWrites int // writes so far, on both servers
	}{
		{"a dry run on an empty project says what it would create and writes nothing", flags("--dry-run"), 0,
			queue + "would create\n" + watchdog + "would create\n" + refresh + "would create\n", "", 0},
		{"the first run creates the queue and both jobs", flags(), 0,
			queue + "created\n" + watchdog + "created\n" + refresh + "created\n", "", 3},
		{"the second run changes nothing and says so", flags(), 0,
			queue + "unchanged\n" + watchdog + "unchanged\n" + refresh + "unchanged\n", "", 3},
		{"a public URL over http is refused before any call", flags("--public-url=http://sundial.example"), exitUsage,
			"", `sundial setup-gcp: public URL "http://sundial.example": want https://HOST`, 3},
		{"a missing project is refused, not taken from nowhere", flags("--gcp-project="), exitUsage,
			"", "sundial setup-gcp: Google Cloud project: missing", 3},
		{"a stray argument is refused", flags("now"), exitUsage, "", `unexpected argument "now"`, 3},
	} {
		out, errOut, status := runCLI(step.args...)
		if status != step.wantStatus || out != step.wantOut || !strings.Contains(errOut, step.wantErr) {
			t.Errorf("%s: status %d, stdout:\n%s\nstderr:\n%s\nwant status %d, stdout:\n%s\nstderr with %q", step.name, status, out, errOut, step.wantStatus, step.wantOut, step.wantErr)
		}
		if w := writes(); w != step.wantWrites {
			t.Errorf("%s: %d writes so far, want %d", step.name, w, step.wantWrites)
		}
	}
}
