package loadtest

import (
	"sync"
	"time"

	"github.com/sundial-cron/sundial/lab/loadtest/measure"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/task"
)

// observer is the engine's Observer: it keeps the lateness of the launches
// of occurrences scheduled inside the measured window, and counts skips,
// failures and repairs over the whole run.
type observer struct {
	now func() time.Time

	mu         sync.Mutex
	start, end time.Time // the window; zero until set
	late       []time.Duration
	skipped    map[string]int
	failed     int
	repairs    int
}

func newObserver(now func() time.Time) *observer {
	return &observer{now: now, skipped: map[string]int{}}
}

func (o *observer) window(start, end time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start, o.end = start, end
}

// Launched: the engine reports lateness, not the occurrence, so the
// occurrence is the launch time less the lateness (the jobs have no
// jitter). That tells a measured occurrence from one of the warm-up or
// the drain.
func (o *observer) Launched(_ string, lateness time.Duration) {
	occ := o.now().Add(-lateness)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.start.IsZero() || occ.Before(o.start) || !occ.Before(o.end) {
		return
	}
	o.late = append(o.late, lateness)
}

func (o *observer) Ended(_ string, s statemachine.Status) {
	if s == statemachine.StatusSucceeded {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed++
}

func (o *observer) Skipped(_ string, r statemachine.SkipReason, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.skipped[string(r)] += n
}

func (o *observer) Disabled(string, statemachine.Reason) {}

func (o *observer) TaskFailed(string, task.Kind, bool) {}

func (o *observer) Repaired(string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.repairs++
}

// measured is how many measured occurrences have launched so far.
func (o *observer) measured() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.late)
}

func (o *observer) results() (late []time.Duration, skipped map[string]int, failed, repairs int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	skipped = make(map[string]int, len(o.skipped))
	for k, v := range o.skipped {
		skipped[k] = v
	}
	return append([]time.Duration(nil), o.late...), skipped, o.failed, o.repairs
}

// peakRSS reads the process's peak resident set (VmHWM); 0 where /proc
// cannot tell.
func peakRSS() uint64 { return measure.ProcField(0, "status", "VmHWM:") }

// processCPU is the process's user+system CPU in seconds; 0 where /proc
// cannot tell.
func processCPU() float64 {
	st, _ := measure.ReadStat(0)
	return st.CPU
}
