package loadtest

import (
	"testing"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
)

var t0 = time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)

func TestObserverKeepsOnlyTheWindowsOccurrences(t *testing.T) {
	t.Parallel()
	now := t0
	o := newObserver(func() time.Time { return now })
	o.Launched("p/before-window-set", 0)
	o.window(t0.Add(time.Minute), t0.Add(2*time.Minute))
	now = t0.Add(time.Minute + 2*time.Second)
	o.Launched("p/warm-up", 3*time.Second) // scheduled 1 s before the window
	o.Launched("p/first", 2*time.Second)   // scheduled at its start
	o.Launched("p/late", 500*time.Millisecond)
	now = t0.Add(2*time.Minute + time.Second)
	o.Launched("p/last-late", 2*time.Second) // scheduled 1 s before its end
	o.Launched("p/after", time.Second)       // scheduled at its end: the next window's
	o.Skipped("p/x", statemachine.SkipOverrun, 2)
	o.Ended("p/x", statemachine.StatusFailed)
	o.Ended("p/y", statemachine.StatusSucceeded)

	late, skipped, failed, _ := o.results()
	want := []time.Duration{2 * time.Second, 500 * time.Millisecond, 2 * time.Second}
	if len(late) != len(want) {
		t.Fatalf("lateness kept %v, want %v", late, want)
	}
	for i := range want {
		if late[i] != want[i] {
			t.Fatalf("lateness kept %v, want %v", late, want)
		}
	}
	if skipped["overrun"] != 2 || failed != 1 {
		t.Errorf("skipped %v failed %d, want overrun 2 and 1 failed", skipped, failed)
	}
}

func TestRunRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{Jobs: 1, Minutes: 1},                // no clock
		{Jobs: 0, Minutes: 1, Now: time.Now}, // no jobs
		{Jobs: 1, Minutes: 0, Now: time.Now}, // nothing to measure
	} {
		if _, err := Run(t.Context(), o); err == nil {
			t.Errorf("Run(%+v) succeeded, want ErrBadOptions", o)
		}
	}
}

// TestProcessCPUReadsTheProcess: the figure is the process's own CPU, so
// it grows while the process computes.
func TestProcessCPUReadsTheProcess(t *testing.T) {
	t.Parallel()
	first := processCPU()
	x := uint64(1)
	for i := 0; processCPU() == first && i < 1e6; i++ {
		for j := range 100000 {
			x = x*6364136223846793005 + uint64(j)
		}
	}
	if got := processCPU(); got <= first {
		t.Errorf("CPU stayed at %v s while computing (%d)", got, x)
	}
}
