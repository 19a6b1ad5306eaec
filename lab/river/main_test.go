package main

import (
	"strings"
	"testing"
	"time"
)

// TestJobIDsAreSundialBenchs: the ids seed the hashed seconds, so they
// must be lab/loadtest.JobID's, or the two engines would fire at
// different seconds.
func TestJobIDsAreSundialBenchs(t *testing.T) {
	for _, c := range []struct {
		i, projects int
		want        string
	}{{0, 100, "bench000/job0000000"}, {1234, 100, "bench034/job0001234"}} {
		if got := jobID(c.i, c.projects); got != c.want {
			t.Errorf("jobID(%d, %d) = %q, want %q", c.i, c.projects, got, c.want)
		}
	}
}

// TestPeriodicJobsFireEveryMinuteAtTheirOwnSecond: each job's next run is
// one minute after the one before, and the jobs spread over the minute.
func TestPeriodicJobsFireEveryMinuteAtTheirOwnSecond(t *testing.T) {
	jobs, err := periodicJobs(300, 100)
	if err != nil {
		t.Fatal(err)
	}
	seconds := map[int]bool{}
	from := time.Date(2026, 11, 24, 12, 0, 0, 500, time.UTC)
	for i := range 300 {
		s, err := parseJobSchedule(i, 100)
		if err != nil {
			t.Fatal(err)
		}
		a := s.Next(from)
		b := s.Next(a)
		if b.Sub(a) != time.Minute || !a.After(from) || a.Sub(from) > time.Minute {
			t.Fatalf("job %d: runs at %v then %v after %v", i, a, b, from)
		}
		seconds[a.Second()] = true
	}
	if len(jobs) != 300 || len(seconds) < 50 {
		t.Errorf("%d jobs over %d distinct seconds; want 300 over most of the minute", len(jobs), len(seconds))
	}
}

// TestRecorderMeasuresTheWindowAndCountsRepeats: work on occurrences
// outside the window is not measured, and a second run of one occurrence
// is a repeat, not a launch.
func TestRecorderMeasuresTheWindowAndCountsRepeats(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 1, 0, 0, time.UTC)
	now := start
	r := newRecorder(func() time.Time { return now }, 2)
	r.window(start, start.Add(time.Minute))
	now = start.Add(-500 * time.Millisecond)
	r.worked(0, start.Add(-time.Second)) // warm-up
	now = start.Add(5*time.Second + 30*time.Millisecond)
	r.worked(1, start.Add(5*time.Second))
	r.worked(1, start.Add(5*time.Second)) // repeated
	now = start.Add(time.Minute + time.Second)
	r.worked(0, start.Add(time.Minute)) // drain, after the window
	late, repeated := r.results()
	if len(late) != 1 || late[0] != 30*time.Millisecond || repeated != 1 {
		t.Errorf("late %v, repeated %d; want [30ms] and 1", late, repeated)
	}
}

// TestTableRowsKeepTheirColumns: a Sundial report (no PostgreSQL) and a
// River report give rows with the same columns.
func TestTableRowsKeepTheirColumns(t *testing.T) {
	sundial := formatRow("sundial", tableRow{Jobs: 1000, Minutes: 1, Expected: 1000, Launches: 1000, CPUSeconds: 2})
	river := formatRow("river", tableRow{Jobs: 1000, Minutes: 1, Expected: 1000, Launches: 1000, CPUSeconds: 2, PostgresCPUSeconds: 1, PostgresPeakRSSMiB: 100, PostgresPeakPSSMiB: 40})
	if strings.Count(sundial, "|") != strings.Count(river, "|") || !strings.Contains(river, "2.0 + 1.0") || !strings.Contains(river, "40 (100)") {
		t.Errorf("rows differ in shape:\n%s\n%s", sundial, river)
	}
}
