package main

import (
	"os/exec"
	"strings"
	"syscall"
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

// TestParseStatReadsPastTheCommandName: a command name may hold spaces and
// parentheses; the fields after it must still be read.
func TestParseStatReadsPastTheCommandName(t *testing.T) {
	line := "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 1 0 100 1000 10 18446744073709551615"
	st, ok := parseStat(line)
	if !ok || st.ppid != 17 || st.cpu != 3 || st.childCPU != 0.5 {
		t.Errorf("parseStat = %+v, %v; want ppid 17, cpu 3, childCPU 0.5", st, ok)
	}
	if _, ok := parseStat(strings.SplitN(line, ")", 2)[0]); ok {
		t.Error("a truncated line parsed")
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

// TestProcTreeFindsTheChildren: PostgreSQL's CPU and memory are its
// children's too, so the tree must hold a single-threaded parent's
// children, as the postmaster's.
func TestProcTreeFindsTheChildren(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 60 & sleep 60 & wait")
	if err := sh.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	defer func() {
		for _, pid := range procTree(sh.Process.Pid)[1:] {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = sh.Process.Kill()
		_ = sh.Wait()
	}()
	var tree []int
	for i := 0; i < 1000 && len(tree) < 3; i++ {
		time.Sleep(10 * time.Millisecond)
		tree = procTree(sh.Process.Pid)
	}
	if len(tree) != 3 || tree[0] != sh.Process.Pid {
		t.Fatalf("tree of sh %d = %v; want it and its two sleeps", sh.Process.Pid, tree)
	}
	for _, pid := range tree[1:] {
		if st, ok := readStat(pid); !ok || st.ppid != sh.Process.Pid {
			t.Errorf("process %d: %+v, %v; want a child of %d", pid, st, ok, sh.Process.Pid)
		}
	}
}
