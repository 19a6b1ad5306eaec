package statemachine_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
	sm "github.com/sundial-cron/sundial/statemachine"
)

// t0 anchors every test: a Monday at 10:00 UTC. Tests speak in offsets
// from it (at(90*time.Second)) so that expected actions read as a timeline.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

const (
	sec    = time.Second
	minute = time.Minute
	hour   = time.Hour
	day    = 24 * time.Hour
)

// removedFromConfig is the reason the config gives a job it no longer lists.
var removedFromConfig = sm.Reason{Kind: sm.ReasonRemovedFromConfig}

// testJobID is the job every fixture runs; jitter hashes it.
const testJobID = "proj/job"

// cfg is the engine configuration of the tests: DefaultConfig, spelled out
// so that the expected times below do not move if the defaults do.
var cfg = sm.Config{
	TaskGrace:      30 * sec,
	KillGrace:      30 * sec,
	LateTolerance:  90 * sec,
	LaunchGrace:    10 * sec,
	DefaultTimeout: 10 * minute,
	MaxTickDelay:   29 * day,
	BackfillScan:   1000,
}

func mustParse(t testing.TB, expr string) *schedule.Schedule {
	t.Helper()
	s, err := schedule.Parse(expr, schedule.Options{JobID: testJobID})
	if err != nil {
		t.Fatalf("schedule.Parse(%q): %v", expr, err)
	}
	return s
}

// fixture is a host for one job: it owns the machine, hands out nonces
// 1, 2, 3, ... in order, and checks the exact actions of every step.
type fixture struct {
	t     testing.TB
	m     *sm.Machine
	nonce int64
}

func newFixture(t testing.TB, expr string, p sm.Policy) *fixture {
	t.Helper()
	f := &fixture{t: t}
	f.m = &sm.Machine{
		JobID:    testJobID,
		Schedule: mustParse(t, expr),
		Policy:   p,
		Config:   cfg,
		NewNonce: func() int64 { f.nonce++; return f.nonce },
	}
	return f
}

// job is a shortcut to the machine's job state.
func (f *fixture) job() *sm.JobState { return &f.m.Job }

// step applies e at now and fails unless it emits exactly want. The
// actions are cleared afterwards, as a host does once it has carried them
// out.
func (f *fixture) step(now time.Time, e sm.Event, want ...sm.Action) {
	f.t.Helper()
	f.m.Now = now
	if err := f.m.Step(e); err != nil {
		f.t.Fatalf("at %s, %s: unexpected error %v", off(now), describe(e), err)
	}
	checkActions(f.t, fmt.Sprintf("at %s, %s", off(now), describe(e)), f.m.Actions, want)
	checkWatchdog(f.t, f.m)
	f.m.Actions = nil
}

// refused applies e at now and fails unless the machine refuses it with
// ErrRefused and leaves the job and the actions as they were.
func (f *fixture) refused(now time.Time, e sm.Event) {
	f.t.Helper()
	f.m.Now = now
	before, nonce := f.m.Job.Clone(), f.nonce
	err := f.m.Step(e)
	if err == nil || !isRefused(err) {
		f.t.Fatalf("at %s, %s: got error %v, want one wrapping ErrRefused", off(now), describe(e), err)
	}
	if !sameJob(f.m.Job, before) {
		f.t.Fatalf("at %s, %s: a refused step changed the job\n got %s\nwant %s", off(now), describe(e), formatJob(f.m.Job), formatJob(before))
	}
	if len(f.m.Actions) != 0 {
		f.t.Fatalf("at %s, %s: a refused step emitted %s", off(now), describe(e), formatActions(f.m.Actions))
	}
	if f.nonce != nonce {
		f.t.Fatalf("at %s, %s: a refused step drew a nonce", off(now), describe(e))
	}
}

// inProgress delivers a StartInvocation again within LaunchGrace of its
// launch and fails unless the machine answers ErrLaunchInProgress and
// changes nothing.
func (f *fixture) inProgress(now time.Time, e sm.Event) {
	f.t.Helper()
	f.m.Now = now
	before, nonce := f.m.Job.Clone(), f.nonce
	if err := f.m.Step(e); !errors.Is(err, sm.ErrLaunchInProgress) {
		f.t.Fatalf("at %s, %s: got error %v, want ErrLaunchInProgress", off(now), describe(e), err)
	}
	if !sameJob(f.m.Job, before) || len(f.m.Actions) != 0 || f.nonce != nonce {
		f.t.Fatalf("at %s, %s: ErrLaunchInProgress, yet the job or the actions changed:\n%s", off(now), describe(e), formatActions(f.m.Actions))
	}
}

// state fails unless the job is in st.
func (f *fixture) state(st sm.State) {
	f.t.Helper()
	if f.m.Job.State != st {
		f.t.Fatalf("state is %s, want %s (job %+v)", f.m.Job.State, st, f.m.Job)
	}
}

func checkActions(t testing.TB, where string, got, want []sm.Action) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: wrong actions\n got:\n%s\nwant:\n%s", where, formatActions(got), formatActions(want))
	}
}

// checkWatchdog checks the watchdog rule (see watchdogErr).
func checkWatchdog(t testing.TB, m *sm.Machine) {
	t.Helper()
	if err := watchdogErr(m); err != nil {
		t.Fatal(err)
	}
}

// watchdogErr checks the watchdog rule: WatchdogTimerTs is set exactly
// when the job waits for a task (a tick, or an unfinished invocation), and
// then it is when the earliest of them must have run.
func watchdogErr(m *sm.Machine) error {
	j := m.Job
	waits := j.TickNonce != 0 || len(j.Active) > 0
	if waits == j.WatchdogTimerTs.IsZero() {
		return fmt.Errorf("at %s: WatchdogTimerTs = %s while the job waits for a task: %v (job %s)", off(m.Now), off(j.WatchdogTimerTs), waits, formatJob(j))
	}
	if !waits {
		return nil
	}
	var want time.Time
	if j.TickNonce != 0 {
		want = j.TickAt.Add(m.Config.TaskGrace)
	}
	for _, inv := range j.Active {
		if want.IsZero() || inv.Deadline.Before(want) {
			want = inv.Deadline
		}
		if p := inv.PollAt.Add(m.Config.TaskGrace); inv.Status == sm.StatusRunning && inv.PollNonce != 0 && p.Before(want) {
			want = p
		}
	}
	if !j.WatchdogTimerTs.Equal(want) {
		return fmt.Errorf("at %s: WatchdogTimerTs = %s, want the earliest deadline %s (job %s)", off(m.Now), off(j.WatchdogTimerTs), off(want), formatJob(j))
	}
	return nil
}

// checkWriteBeforeCall checks write before call (see writeBeforeCallErr).
func checkWriteBeforeCall(t testing.TB, where string, actions []sm.Action) {
	t.Helper()
	if err := writeBeforeCallErr(actions); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
}

// writeBeforeCallErr fails if a step's actions hold a Launch without a
// Record LAUNCHING of the same invocation and attempt before it.
func writeBeforeCallErr(actions []sm.Action) error {
	recorded := map[string]bool{}
	for _, a := range actions {
		switch a := a.(type) {
		case sm.Record:
			if a.Status == sm.StatusLaunching {
				recorded[fmt.Sprintf("%s#%d", a.ID, a.Attempt)] = true
			}
		case sm.Launch:
			if !recorded[fmt.Sprintf("%s#%d", a.Invocation, a.Attempt)] {
				return fmt.Errorf("Launch %s#%d without a Record LAUNCHING before it in the same step:\n%s", a.Invocation, a.Attempt, formatActions(actions))
			}
		}
	}
	return nil
}

func isRefused(err error) bool { return errors.Is(err, sm.ErrRefused) }

// off prints an instant as an offset from t0, which is how tests think.
func off(t time.Time) string {
	if t.IsZero() {
		return "zero"
	}
	d := t.Sub(t0)
	if d < 0 {
		return "t0-" + (-d).String()
	}
	return "t0+" + d.String()
}

func describe(e sm.Event) string { return fmt.Sprintf("%T%+v", e, e) }

func formatActions(as []sm.Action) string {
	if len(as) == 0 {
		return "  (none)"
	}
	var b strings.Builder
	for _, a := range as {
		b.WriteString("  ")
		switch a := a.(type) {
		case sm.TickLater:
			fmt.Fprintf(&b, "TickLater{At: %s, Nonce: %d}", off(a.At), a.Nonce)
		case sm.StartInvocation:
			fmt.Fprintf(&b, "StartInvocation{%s#%d, Nonce: %d, At: %s}", a.Invocation, a.Attempt, a.Nonce, off(a.At))
		case sm.Record:
			fmt.Fprintf(&b, "Record{%s#%d at %s manual=%v, %s, %q}", a.ID, a.Attempt, off(a.At), a.Manual, a.Status, a.Message)
		case sm.RecordSkipped:
			fmt.Fprintf(&b, "RecordSkipped{%s, %s..%s, Count: %d, manual=%v, %s %q}", a.ID, off(a.First), off(a.Last), a.Count, a.Manual, a.Reason, a.Note)
		default:
			fmt.Fprintf(&b, "%T%+v", a, a)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Constructors of expected actions, so that tables stay one line a row.

func tickLater(t time.Time, nonce int64) sm.Action { return sm.TickLater{At: t, Nonce: nonce} }

func start(id string, attempt int, nonce int64, t time.Time) sm.Action {
	return sm.StartInvocation{Invocation: id, Attempt: attempt, Nonce: nonce, At: t}
}

// occ is the occurrence scheduled at t.
func occ(t time.Time) sm.Occurrence { return sm.Occurrence{ID: sm.OccurrenceID(t), At: t} }

// manual is the n-th manual trigger, asked for at t.
func manual(n int, t time.Time) sm.Occurrence {
	return sm.Occurrence{ID: fmt.Sprintf("manual-%d", n), At: t, Manual: true}
}

func record(o sm.Occurrence, attempt int, st sm.Status, msg string) sm.Action {
	return sm.Record{Occurrence: o, Attempt: attempt, Status: st, Message: msg}
}

func skipped(first, last time.Time, count int, r sm.SkipReason) sm.Action {
	return sm.RecordSkipped{ID: sm.OccurrenceID(first), First: first, Last: last, Count: count, Reason: r}
}

func skippedOne(o sm.Occurrence, r sm.SkipReason) sm.Action {
	return sm.RecordSkipped{ID: o.ID, First: o.At, Last: o.At, Count: 1, Manual: o.Manual, Reason: r}
}

func launch(id string, attempt int) sm.Action { return sm.Launch{Invocation: id, Attempt: attempt} }

func resolve(id string, attempt int) sm.Action { return sm.Resolve{Invocation: id, Attempt: attempt} }

func abortTarget(id string, attempt int) sm.Action {
	return sm.AbortTarget{Invocation: id, Attempt: attempt}
}

// Invocations in each phase, as the machine leaves them (TaskGrace 30s,
// hard timeout DefaultTimeout+KillGrace = 10m30s).

func queuedInv(o sm.Occurrence, attempt int, nonce int64, since time.Time) sm.Invocation {
	return sm.Invocation{Occurrence: o, Attempt: attempt, Status: sm.StatusQueued, Nonce: nonce, Since: since, Deadline: since.Add(30 * sec)}
}

func backoffInv(o sm.Occurrence, attempt int, nonce int64, since, retryAt time.Time) sm.Invocation {
	return sm.Invocation{Occurrence: o, Attempt: attempt, Status: sm.StatusRetrying, Nonce: nonce, Since: since, RetryAt: retryAt, Deadline: retryAt.Add(30 * sec)}
}

func launchingInv(o sm.Occurrence, attempt int, nonce int64, since time.Time) sm.Invocation {
	return sm.Invocation{Occurrence: o, Attempt: attempt, Status: sm.StatusLaunching, Nonce: nonce, Since: since, Deadline: since.Add(10*minute + 30*sec)}
}

func runningInv(o sm.Occurrence, attempt int, nonce int64, since time.Time) sm.Invocation {
	inv := launchingInv(o, attempt, nonce, since)
	inv.Status = sm.StatusRunning
	return inv
}

// settled fills in WatchdogTimerTs by the watchdog rule, so that the job
// literals of the tables need not repeat it.
func settled(j sm.JobState) sm.JobState {
	j.WatchdogTimerTs = time.Time{}
	if j.TickNonce != 0 {
		j.WatchdogTimerTs = j.TickAt.Add(cfg.TaskGrace)
	}
	for _, inv := range j.Active {
		if j.WatchdogTimerTs.IsZero() || inv.Deadline.Before(j.WatchdogTimerTs) {
			j.WatchdogTimerTs = inv.Deadline
		}
	}
	return j
}

// sameJob compares jobs, an empty Active being the same as none.
func sameJob(a, b sm.JobState) bool {
	if len(a.Active) == 0 {
		a.Active = nil
	}
	if len(b.Active) == 0 {
		b.Active = nil
	}
	return reflect.DeepEqual(a, b)
}

func formatJob(j sm.JobState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{State: %s, Reason: %v, TickNonce: %d, TickAt: %s, NextAt: %s, Cursor: %s, Failures: %d, Triggers: %d, LastEnded: %s, WatchdogTimerTs: %s",
		j.State, j.Reason, j.TickNonce, off(j.TickAt), off(j.NextAt), off(j.Cursor), j.Failures, j.Triggers, off(j.LastEnded), off(j.WatchdogTimerTs))
	if j.Runs != 0 || !j.PausedUntil.IsZero() {
		fmt.Fprintf(&b, ", Runs: %d, PausedUntil: %s", j.Runs, off(j.PausedUntil))
	}
	if j.Pending != nil {
		fmt.Fprintf(&b, ", Pending: %s at %s", j.Pending.ID, off(j.Pending.At))
	}
	for _, inv := range j.Active {
		fmt.Fprintf(&b, "\n    Active: %s#%d %s nonce=%d since=%s retryAt=%s deadline=%s", inv.ID, inv.Attempt, inv.Status, inv.Nonce, off(inv.Since), off(inv.RetryAt), off(inv.Deadline))
	}
	b.WriteString("}")
	return b.String()
}

func itoa(n int) string { return fmt.Sprint(n) }
