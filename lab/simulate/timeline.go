package simulate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// StuckJob is a job the run found stuck, with what happened to it around
// then, so that a finding can be read rather than guessed.
type StuckJob struct {
	Job string `json:"job"`
	// WaitSeconds is how long its timer had passed (or the process had
	// been up) when a watchdog pass first saw it past the bound.
	WaitSeconds float64 `json:"wait_s"`
	// Timeline is its last events before that pass and the first ones
	// after, oldest first, each with the process's clock and the true
	// simulated time.
	Timeline []string `json:"timeline"`
}

// Bounds of what the report keeps: a run that breaks the guarantee for
// every job must still give a report one can read.
const (
	stuckListed   = 20 // stuck jobs given a timeline
	eventsBefore  = 40 // a job's events kept up to the pass that found it stuck
	eventsAfter   = 12 // and after it, to show how it came unstuck
	processEvents = 8  // whole-process events (downtimes, jumps, purges) kept
)

// timelines records, for every job, its last few events as the simulator
// sees them: commits and the timer they left, deliveries, launches,
// injected faults, watchdog passes and repairs.
type timelines struct {
	mu      sync.Mutex
	jobs    map[string]*jobEvents
	process []entry // the last processEvents whole-process events
	stuck   []*jobEvents
}

type jobEvents struct {
	id    string
	wait  time.Duration
	last  []entry // a ring of eventsBefore, oldest at next
	next  int
	after []entry // once stuck: the events since
}

// entry is one event, formatted only if its job turns out stuck: nearly
// none does, and a run notes hundreds of thousands.
type entry struct {
	at      time.Time // the true simulated time
	skew    time.Duration
	process bool
	format  string
	args    []any
}

func (e entry) String() string {
	prefix := " "
	if e.process {
		prefix = " process: "
	}
	return stamp(e.at, e.skew) + prefix + fmt.Sprintf(e.format, e.args...)
}

// note records an event of job at the simulated time now (skew: the process
// clock's error then).
func (tl *timelines) note(job string, now time.Time, skew time.Duration, format string, args ...any) {
	e := entry{at: now, skew: skew, format: format, args: args}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.jobs == nil {
		tl.jobs = map[string]*jobEvents{}
	}
	j := tl.jobs[job]
	if j == nil {
		j = &jobEvents{id: job}
		tl.jobs[job] = j
	}
	switch {
	case j.after != nil:
		if len(j.after) < eventsAfter {
			j.after = append(j.after, e)
		}
	case len(j.last) < eventsBefore:
		j.last = append(j.last, e)
	default:
		j.last[j.next] = e
		j.next = (j.next + 1) % eventsBefore
	}
}

// noteProcess records an event of the whole process: each stuck job's
// timeline shows the last few before it was found.
func (tl *timelines) noteProcess(now time.Time, skew time.Duration, format string, args ...any) {
	e := entry{at: now, skew: skew, process: true, format: format, args: args}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.process = append(tl.process, e)
	if len(tl.process) > processEvents {
		tl.process = tl.process[1:]
	}
}

// stuckNow marks job stuck, after a wait: its events so far, and the
// process's, are kept, and up to eventsAfter more are added.
func (tl *timelines) stuckNow(job string, wait time.Duration) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if len(tl.stuck) == stuckListed {
		return
	}
	j := tl.jobs[job]
	if j == nil {
		j = &jobEvents{id: job}
	}
	ordered := append(slices.Clone(j.last[j.next:]), j.last[:j.next]...)
	// The process's events go among the job's by time; the job's keep
	// their order, which within a step is the order they happened in.
	ordered = append(ordered, tl.process...)
	slices.SortStableFunc(ordered, func(a, b entry) int { return a.at.Compare(b.at) })
	j.last, j.next, j.wait = ordered, 0, wait
	j.after = []entry{}
	tl.stuck = append(tl.stuck, j)
}

// report returns the stuck jobs' timelines.
func (tl *timelines) report() []StuckJob {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []StuckJob
	for _, j := range tl.stuck {
		var lines []string
		for _, e := range append(slices.Clone(j.last), j.after...) {
			lines = append(lines, e.String())
		}
		out = append(out, StuckJob{Job: j.id, WaitSeconds: j.wait.Seconds(), Timeline: lines})
	}
	return out
}

// stamp is the true simulated time, and the process's clock when it is off.
func stamp(now time.Time, skew time.Duration) string {
	s := now.UTC().Format("Jan 02 15:04:05.000")
	if skew != 0 {
		s += fmt.Sprintf(" (process clock %+.1fs)", skew.Seconds())
	}
	return s
}

// note records an event of job at the current simulated time.
func (s *sim) note(job, format string, args ...any) {
	s.timelines.note(job, s.now, s.skew, format, args...)
}

// watchedTx is a transaction that remembers the job it last wrote.
type watchedTx struct {
	store.Tx
	job *store.JobRecord
}

func (t *watchedTx) PutJob(j *store.JobRecord) error {
	t.job = j
	return t.Tx.PutJob(j)
}

// noteCommit records what a committed transaction left of the job: its
// state and timer.
func (s *sim) noteCommit(jobID string, j *store.JobRecord, tasks int) {
	if j == nil {
		s.note(jobID, "commit: job unchanged, %d task(s)", tasks)
		return
	}
	timer := "none"
	if !j.WatchdogTimerTs.IsZero() {
		timer = j.WatchdogTimerTs.UTC().Format("15:04:05.000")
	}
	s.note(jobID, "commit: state %s, timer %s, %d task(s)", j.State, timer, tasks)
}

// watchedRepairer is the engine as the watchdog sees it, each repair noted.
type watchedRepairer struct{ s *sim }

func (r watchedRepairer) Repair(ctx context.Context, jobID string) (bool, error) {
	ctx, end := inProcess(ctx)
	changed, err := r.s.engine.Repair(ctx, jobID)
	end()
	r.s.mu.Lock()
	// The watchdog tries again after an error, and stops at the first
	// success: the last attempt's answer is the pass's.
	r.s.refused[jobID] = errors.Is(err, errInjected)
	if !r.s.refused[jobID] {
		delete(r.s.refused, jobID)
	}
	r.s.mu.Unlock()
	switch {
	case err != nil:
		r.s.note(jobID, "watchdog repair failed: %v", err)
	case changed:
		r.s.note(jobID, "watchdog repair changed the job")
	default:
		r.s.note(jobID, "watchdog repair changed nothing")
	}
	return changed, err
}
