package statemachine_test

import (
	"fmt"
	"testing"
	"time"

	sm "github.com/sundial-cron/sundial/statemachine"
)

// transition is one step from a given job state: the exact actions it emits
// and the exact job it leaves. The fixture's nonces start at 11, so every
// nonce a case expects is 11, 12, ... in the order the step draws them;
// nonces below 11 are the ones the job already had.
type transition struct {
	name    string
	expr    string // the schedule; "* * * * *" when empty
	policy  sm.Policy
	job     sm.JobState // WatchdogTimerTs is filled in by settled
	now     time.Time
	event   sm.Event
	want    []sm.Action
	wantJob sm.JobState // WatchdogTimerTs is filled in by settled
	refused bool        // the step must be refused and change nothing
	// broken: the machine runs without a schedule or a policy, as the
	// host runs Broken.
	broken bool
}

func runTransitions(t *testing.T, cases []transition) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			expr := c.expr
			if expr == "" {
				expr = "* * * * *"
			}
			f := newFixture(t, expr, c.policy)
			f.nonce = 10
			if c.broken {
				f.m.Schedule, f.m.Policy = nil, sm.Policy{}
			}
			// The cases share their job literals' Active arrays, which a
			// step changes in place.
			f.m.Job = settled(c.job.Clone())
			if c.refused {
				f.refused(c.now, c.event)
				return
			}
			f.step(c.now, c.event, c.want...)
			if want := settled(c.wantJob); !sameJob(f.m.Job, want) {
				t.Fatalf("wrong job after %s\n got %s\nwant %s", describe(c.event), formatJob(f.m.Job), formatJob(want))
			}
		})
	}
}

// Occurrences of the every-minute schedule that the tables use.
var (
	o1m = occ(at(1 * minute))
	o2m = occ(at(2 * minute))
	o3m = occ(at(3 * minute))
)

// scheduledAt0 is an every-minute job that ticked at t0 and waits for the
// tick of t0+1m (nonce 7).
var scheduledAt0 = sm.JobState{State: sm.Scheduled, TickNonce: 7, TickAt: at(1 * minute), NextAt: at(1 * minute), Cursor: t0}

// withJob returns scheduledAt0 changed by fn.
func withJob(fn func(j *sm.JobState)) sm.JobState {
	j := scheduledAt0.Clone()
	fn(&j)
	return j
}

func TestDefined(t *testing.T) {
	t.Parallel()
	runTransitions(t, []transition{{
		name:    "a new job is SCHEDULED with a tick at its next occurrence",
		now:     at(10 * sec),
		event:   sm.Defined{},
		want:    []sm.Action{tickLater(at(1*minute), 11)},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(1 * minute), NextAt: at(1 * minute), Cursor: at(10 * sec)},
	}, {
		name:    "a new job exactly on an occurrence waits for the next one",
		now:     t0,
		event:   sm.Defined{},
		want:    []sm.Action{tickLater(at(1*minute), 11)},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(1 * minute), NextAt: at(1 * minute), Cursor: t0},
	}, {
		name:  "a new job whose next occurrence is far hops toward it",
		expr:  "0 0 1 1 *", // 2027-01-01, 305 days after t0
		now:   t0,
		event: sm.Defined{},
		want:  []sm.Action{tickLater(at(29*day), 11)},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(29 * day),
			NextAt: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), Cursor: t0},
	}, {
		name:    "a new triggered-only job waits for no tick",
		expr:    "triggered",
		now:     t0,
		event:   sm.Defined{},
		wantJob: sm.JobState{State: sm.Scheduled, Cursor: t0},
	}, {
		name:    "a new interval job ticks one interval from now",
		expr:    "@every 90s",
		now:     t0,
		event:   sm.Defined{},
		want:    []sm.Action{tickLater(at(90*sec), 11)},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(90 * sec), NextAt: at(90 * sec), Cursor: t0},
	}, {
		name:  "a change while SCHEDULED re-plans the tick under a new nonce",
		expr:  "*/5 * * * *",
		job:   scheduledAt0,
		now:   at(20 * sec),
		event: sm.Defined{},
		want:  []sm.Action{tickLater(at(5*minute), 11)},
		wantJob: withJob(func(j *sm.JobState) {
			j.TickNonce, j.TickAt, j.NextAt, j.Cursor = 11, at(5*minute), at(5*minute), at(20*sec)
		}),
	}, {
		name: "a change while RUNNING keeps the invocation and re-plans the tick",
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, at(1*sec))}
		}),
		now:   at(30 * sec),
		event: sm.Defined{},
		want:  []sm.Action{tickLater(at(1*minute), 11)},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, at(1*sec))}
			j.TickNonce, j.Cursor = 11, at(30*sec)
		}),
	}, {
		name: "a change while QUEUED keeps the invocation and re-plans the tick",
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 5, t0)}
		}),
		now:   at(10 * sec),
		event: sm.Defined{},
		want:  []sm.Action{tickLater(at(1*minute), 11)},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 5, t0)}
			j.TickNonce, j.Cursor = 11, at(10*sec)
		}),
	}, {
		name:    "a change while PAUSED waits for the resume to plan anything",
		job:     sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0},
		now:     at(10 * minute),
		event:   sm.Defined{},
		wantJob: sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0},
	}, {
		name:    "a DISABLED job defined again is SCHEDULED with Failures reset, and what fell while disabled is not replayed",
		job:     sm.JobState{State: sm.Disabled, Reason: sm.Reason{Kind: sm.ReasonAutoDisabled, Note: "after 3 failed invocations in a row"}, Failures: 3, Cursor: at(-1 * hour), LastEnded: at(-1 * hour)},
		now:     at(10 * sec),
		event:   sm.Defined{},
		want:    []sm.Action{tickLater(at(1*minute), 11)},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(1 * minute), NextAt: at(1 * minute), Cursor: at(10 * sec), LastEnded: at(-1 * hour)},
	}})
}

func TestRemoved(t *testing.T) {
	t.Parallel()
	allow := sm.Policy{Overlap: sm.OverlapAllow, MaxConcurrent: 3}
	runTransitions(t, []transition{{
		name:    "a SCHEDULED job is DISABLED with its reason and its tick dropped",
		job:     scheduledAt0,
		now:     at(10 * sec),
		event:   sm.Removed{Reason: removedFromConfig},
		wantJob: sm.JobState{State: sm.Disabled, Reason: removedFromConfig, Cursor: at(10 * sec)},
	}, {
		name:    "occurrences due but not yet ticked are recorded as skipped: disabled",
		job:     scheduledAt0,
		now:     at(2*minute + 10*sec),
		event:   sm.Removed{Reason: removedFromConfig},
		want:    []sm.Action{skipped(at(1*minute), at(2*minute), 2, sm.SkipDisabled)},
		wantJob: sm.JobState{State: sm.Disabled, Reason: removedFromConfig, Cursor: at(2*minute + 10*sec)},
	}, {
		name:   "the pending occurrence is dropped as skipped: disabled",
		policy: sm.Policy{Overlap: sm.OverlapQueueOne},
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active, j.Pending, j.Cursor = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}, &o1m, at(1*minute)
		}),
		now:   at(70 * sec),
		event: sm.Removed{Reason: removedFromConfig},
		want:  []sm.Action{skippedOne(o1m, sm.SkipDisabled)},
		wantJob: sm.JobState{State: sm.Disabled, Reason: removedFromConfig, Cursor: at(70 * sec),
			Active: []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}},
	}, {
		name:   "queued and backing-off invocations are aborted, launching and running ones are left to finish",
		policy: allow,
		job: withJob(func(j *sm.JobState) {
			j.State = sm.Running
			j.Active = []sm.Invocation{
				launchingInv(occ(at(-2*minute)), 1, 3, at(-2*minute)),
				runningInv(occ(at(-1*minute)), 1, 4, at(-1*minute)),
				backoffInv(occ(t0), 2, 5, at(10*sec), at(2*minute)),
				queuedInv(o1m, 1, 6, at(1*minute)),
			}
			j.Cursor = at(1 * minute)
		}),
		now:   at(70 * sec),
		event: sm.Removed{Reason: sm.Reason{Kind: sm.ReasonDisabledInConfig}},
		want: []sm.Action{
			record(o1m, 1, sm.StatusAborted, "the job was disabled: disabled in config"),
			record(occ(t0), 2, sm.StatusAborted, "the job was disabled: disabled in config"),
		},
		wantJob: sm.JobState{State: sm.Disabled, Reason: sm.Reason{Kind: sm.ReasonDisabledInConfig}, Cursor: at(70 * sec), LastEnded: at(70 * sec),
			Active: []sm.Invocation{
				launchingInv(occ(at(-2*minute)), 1, 3, at(-2*minute)),
				runningInv(occ(at(-1*minute)), 1, 4, at(-1*minute)),
			}},
	}, {
		name:    "a PAUSED job is DISABLED; what fell in the pause is recorded as skipped: paused",
		job:     sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0},
		now:     at(3*minute + 10*sec),
		event:   sm.Removed{Reason: removedFromConfig},
		want:    []sm.Action{skipped(at(1*minute), at(3*minute), 3, sm.SkipPaused)},
		wantJob: sm.JobState{State: sm.Disabled, Reason: removedFromConfig, Cursor: at(3*minute + 10*sec)},
	}})
}

func TestBroken(t *testing.T) {
	t.Parallel()
	invalid := sm.Reason{Kind: sm.ReasonScheduleInvalid, Note: `unknown time zone "Mars/Olympus"`}
	aborted := "the job was disabled: its schedule is no longer valid: unknown time zone \"Mars/Olympus\""
	runTransitions(t, []transition{{
		name:    "a SCHEDULED job is DISABLED with its reason, its tick dropped, and nothing due is listed without a schedule",
		broken:  true,
		job:     scheduledAt0,
		now:     at(2*minute + 10*sec),
		event:   sm.Broken{Reason: invalid},
		wantJob: sm.JobState{State: sm.Disabled, Reason: invalid, Cursor: at(2*minute + 10*sec)},
	}, {
		name:   "every unfinished invocation is aborted, launched ones at their target too, and the pending one is skipped: disabled",
		broken: true,
		job: withJob(func(j *sm.JobState) {
			j.State = sm.Running
			j.Active = []sm.Invocation{
				launchingInv(occ(at(-2*minute)), 1, 3, at(-2*minute)),
				runningInv(occ(at(-1*minute)), 1, 4, at(-1*minute)),
				backoffInv(occ(t0), 2, 5, at(10*sec), at(2*minute)),
			}
			j.Pending = &o1m
			j.Cursor = at(1 * minute)
		}),
		now:   at(70 * sec),
		event: sm.Broken{Reason: invalid},
		want: []sm.Action{
			skippedOne(o1m, sm.SkipDisabled),
			record(occ(t0), 2, sm.StatusAborted, aborted),
			abortTarget(occ(at(-1*minute)).ID, 1),
			record(occ(at(-1*minute)), 1, sm.StatusAborted, aborted),
			abortTarget(occ(at(-2*minute)).ID, 1),
			record(occ(at(-2*minute)), 1, sm.StatusAborted, aborted),
		},
		wantJob: sm.JobState{State: sm.Disabled, Reason: invalid, Cursor: at(70 * sec), LastEnded: at(70 * sec)},
	}, {
		name:   "a job already DISABLED takes the new reason and its running invocation is aborted, so nothing waits for the watchdog",
		broken: true,
		job: sm.JobState{State: sm.Disabled, Reason: removedFromConfig, Cursor: t0,
			Active: []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}},
		now:   at(70 * sec),
		event: sm.Broken{Reason: invalid},
		want: []sm.Action{
			abortTarget(occ(t0).ID, 1),
			record(occ(t0), 1, sm.StatusAborted, aborted),
		},
		wantJob: sm.JobState{State: sm.Disabled, Reason: invalid, Cursor: at(70 * sec), LastEnded: at(70 * sec)},
	}, {
		name:    "a PAUSED job is DISABLED with the reason",
		broken:  true,
		job:     sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0},
		now:     at(3 * minute),
		event:   sm.Broken{Reason: invalid},
		wantJob: sm.JobState{State: sm.Disabled, Reason: invalid, Cursor: at(3 * minute)},
	}})
}

func TestTick(t *testing.T) {
	t.Parallel()
	jan1 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	hopping := sm.JobState{State: sm.Scheduled, TickNonce: 7, TickAt: at(29 * day), NextAt: jan1, Cursor: t0}
	runTransitions(t, []transition{{
		name:    "a tick with a stale nonce does nothing",
		job:     scheduledAt0,
		now:     at(1 * minute),
		event:   sm.Tick{Nonce: 6},
		wantJob: scheduledAt0,
	}, {
		name:    "a tick with nonce 0 does nothing",
		job:     withJob(func(j *sm.JobState) { j.TickNonce, j.TickAt, j.NextAt = 0, time.Time{}, time.Time{} }),
		now:     at(1 * minute),
		event:   sm.Tick{},
		wantJob: withJob(func(j *sm.JobState) { j.TickNonce, j.TickAt, j.NextAt = 0, time.Time{}, time.Time{} }),
	}, {
		name:    "a tick of a DISABLED job does nothing, even with the nonce it last had",
		job:     sm.JobState{State: sm.Disabled, Reason: removedFromConfig, TickNonce: 7, TickAt: at(1 * minute), NextAt: at(1 * minute), Cursor: t0},
		now:     at(1 * minute),
		event:   sm.Tick{Nonce: 7},
		wantJob: sm.JobState{State: sm.Disabled, Reason: removedFromConfig, TickNonce: 7, TickAt: at(1 * minute), NextAt: at(1 * minute), Cursor: t0},
	}, {
		name:    "an early tick re-schedules itself under a new nonce",
		job:     scheduledAt0,
		now:     at(50 * sec),
		event:   sm.Tick{Nonce: 7},
		want:    []sm.Action{tickLater(at(1*minute), 11)},
		wantJob: withJob(func(j *sm.JobState) { j.TickNonce = 11 }),
	}, {
		name:  "a tick on time queues the occurrence, starts it and plans the next tick",
		job:   scheduledAt0,
		now:   at(1 * minute),
		event: sm.Tick{Nonce: 7},
		want: []sm.Action{
			record(o1m, 1, sm.StatusQueued, ""),
			start(o1m.ID, 1, 11, at(1*minute)),
			tickLater(at(2*minute), 12),
		},
		wantJob: sm.JobState{State: sm.Queued, TickNonce: 12, TickAt: at(2 * minute), NextAt: at(2 * minute), Cursor: at(1 * minute),
			Active: []sm.Invocation{queuedInv(o1m, 1, 11, at(1*minute))}},
	}, {
		name:  "a tick late by less than LateTolerance still runs the occurrence",
		job:   scheduledAt0,
		now:   at(1*minute + 45*sec),
		event: sm.Tick{Nonce: 7},
		want: []sm.Action{
			record(o1m, 1, sm.StatusQueued, ""),
			start(o1m.ID, 1, 11, at(1*minute+45*sec)),
			tickLater(at(2*minute), 12),
		},
		wantJob: sm.JobState{State: sm.Queued, TickNonce: 12, TickAt: at(2 * minute), NextAt: at(2 * minute), Cursor: at(1*minute + 45*sec),
			Active: []sm.Invocation{queuedInv(o1m, 1, 11, at(1*minute+45*sec))}},
	}, {
		name:  "a tick later than LateTolerance records the occurrence as missed",
		expr:  "*/5 * * * *",
		job:   sm.JobState{State: sm.Scheduled, TickNonce: 7, TickAt: at(5 * minute), NextAt: at(5 * minute), Cursor: t0},
		now:   at(6*minute + 31*sec),
		event: sm.Tick{Nonce: 7},
		want: []sm.Action{
			skipped(at(5*minute), at(5*minute), 1, sm.SkipMissed),
			tickLater(at(10*minute), 11),
		},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(10 * minute), NextAt: at(10 * minute), Cursor: at(6*minute + 31*sec)},
	}, {
		name:    "a hop toward a far occurrence hops again",
		expr:    "0 0 1 1 *",
		job:     hopping,
		now:     at(29 * day),
		event:   sm.Tick{Nonce: 7},
		want:    []sm.Action{tickLater(at(58*day), 11)},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(58 * day), NextAt: jan1, Cursor: t0},
	}, {
		name:    "the last hop lands on the occurrence",
		expr:    "0 0 1 1 *",
		job:     hopping,
		now:     jan1.Add(-10 * day),
		event:   sm.Tick{Nonce: 7},
		want:    []sm.Action{tickLater(jan1, 11)},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: jan1, NextAt: jan1, Cursor: t0},
	}, {
		name:  "an interval tick queues its occurrence and plans nothing while it runs",
		expr:  "@every 90s",
		job:   sm.JobState{State: sm.Scheduled, TickNonce: 7, TickAt: at(90 * sec), NextAt: at(90 * sec), Cursor: t0},
		now:   at(90 * sec),
		event: sm.Tick{Nonce: 7},
		want: []sm.Action{
			record(occ(at(90*sec)), 1, sm.StatusQueued, ""),
			start(occ(at(90*sec)).ID, 1, 11, at(90*sec)),
		},
		wantJob: sm.JobState{State: sm.Queued, Cursor: at(90 * sec),
			Active: []sm.Invocation{queuedInv(occ(at(90*sec)), 1, 11, at(90*sec))}},
	}})
}

func TestTriggered(t *testing.T) {
	t.Parallel()
	running := withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}
	})
	runTransitions(t, []transition{{
		name:  "a trigger of a SCHEDULED job queues a manual invocation and leaves the tick",
		job:   scheduledAt0,
		now:   at(10 * sec),
		event: sm.Triggered{},
		want: []sm.Action{
			record(manual(1, at(10*sec)), 1, sm.StatusQueued, ""),
			start("manual-1", 1, 11, at(10*sec)),
		},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Triggers = sm.Queued, 1
			j.Active = []sm.Invocation{queuedInv(manual(1, at(10*sec)), 1, 11, at(10*sec))}
		}),
	}, {
		name:  "a trigger while one runs obeys overlap skip: skipped as overrun",
		job:   running,
		now:   at(10 * sec),
		event: sm.Triggered{},
		want:  []sm.Action{skippedOne(manual(1, at(10*sec)), sm.SkipOverrun)},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Triggers, j.Active = sm.Running, 1, []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}
		}),
	}, {
		name:   "a trigger while one runs obeys overlap allow: started beside it",
		policy: sm.Policy{Overlap: sm.OverlapAllow, MaxConcurrent: 2},
		job:    running,
		now:    at(10 * sec),
		event:  sm.Triggered{},
		want: []sm.Action{
			record(manual(1, at(10*sec)), 1, sm.StatusQueued, ""),
			start("manual-1", 1, 11, at(10*sec)),
		},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Triggers = sm.Running, 1
			j.Active = []sm.Invocation{runningInv(occ(t0), 1, 5, t0), queuedInv(manual(1, at(10*sec)), 1, 11, at(10*sec))}
		}),
	}, {
		name:  "a trigger of a PAUSED job runs it and keeps it paused",
		job:   sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0, Triggers: 4},
		now:   at(10 * sec),
		event: sm.Triggered{},
		want: []sm.Action{
			record(manual(5, at(10*sec)), 1, sm.StatusQueued, ""),
			start("manual-5", 1, 11, at(10*sec)),
		},
		wantJob: sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0, Triggers: 5,
			Active: []sm.Invocation{queuedInv(manual(5, at(10*sec)), 1, 11, at(10*sec))}},
	}, {
		name:    "a trigger of a DISABLED job is refused and changes nothing",
		job:     sm.JobState{State: sm.Disabled, Reason: removedFromConfig, Cursor: t0, Triggers: 2},
		now:     at(10 * sec),
		event:   sm.Triggered{},
		refused: true,
	}})
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	paused := sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0}
	runTransitions(t, []transition{{
		name:    "a pause drops the tick",
		job:     scheduledAt0,
		now:     at(10 * sec),
		event:   sm.PauseRequested{Note: "maintenance"},
		wantJob: paused,
	}, {
		name:   "a pause drops the pending occurrence as skipped: paused, and lets the running one finish",
		policy: sm.Policy{Overlap: sm.OverlapQueueOne},
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active, j.Pending = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}, &o1m
		}),
		now:   at(70 * sec),
		event: sm.PauseRequested{Note: "maintenance"},
		want:  []sm.Action{skippedOne(o1m, sm.SkipPaused)},
		wantJob: sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "maintenance"}, Cursor: t0,
			Active: []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}},
	}, {
		name:    "a pause of a PAUSED job does nothing",
		job:     paused,
		now:     at(10 * sec),
		event:   sm.PauseRequested{Note: "again"},
		wantJob: paused,
	}, {
		name:    "a pause of a PAUSED job that renotes it replaces its note and nothing else",
		job:     paused,
		now:     at(10 * sec),
		event:   sm.PauseRequested{Note: "migration, until 14:00", Renote: true},
		wantJob: sm.JobState{State: sm.Paused, Reason: sm.Reason{Kind: sm.ReasonPaused, Note: "migration, until 14:00"}, Cursor: t0},
	}, {
		name:    "a pause of a SCHEDULED job that renotes it pauses it as any pause",
		job:     scheduledAt0,
		now:     at(10 * sec),
		event:   sm.PauseRequested{Note: "maintenance", Renote: true},
		wantJob: paused,
	}, {
		name:    "a pause of a DISABLED job is refused and changes nothing",
		job:     sm.JobState{State: sm.Disabled, Reason: removedFromConfig, Cursor: t0},
		now:     at(10 * sec),
		event:   sm.PauseRequested{Note: "maintenance"},
		refused: true,
	}, {
		name:  "a resume with catch-up window 0 records what fell in the pause as skipped: paused",
		job:   paused,
		now:   at(10*minute + 30*sec),
		event: sm.ResumeRequested{},
		want: []sm.Action{
			skipped(at(1*minute), at(10*minute), 10, sm.SkipPaused),
			tickLater(at(11*minute), 11),
		},
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(11 * minute), NextAt: at(11 * minute), Cursor: at(10*minute + 30*sec)},
	}, {
		name:  "a resume with catch-up window 0 exactly on an occurrence runs that one",
		job:   paused,
		now:   at(10 * minute),
		event: sm.ResumeRequested{},
		want: []sm.Action{
			skipped(at(1*minute), at(9*minute), 9, sm.SkipPaused),
			record(occ(at(10*minute)), 1, sm.StatusQueued, ""),
			start(occ(at(10*minute)).ID, 1, 11, at(10*minute)),
			tickLater(at(11*minute), 12),
		},
		wantJob: sm.JobState{State: sm.Queued, TickNonce: 12, TickAt: at(11 * minute), NextAt: at(11 * minute), Cursor: at(10 * minute),
			Active: []sm.Invocation{queuedInv(occ(at(10*minute)), 1, 11, at(10*minute))}},
	}, {
		name:   "a resume with a catch-up window runs only the latest occurrence inside it",
		policy: sm.Policy{CatchupWindow: 5 * minute},
		job:    paused,
		now:    at(10*minute + 30*sec),
		event:  sm.ResumeRequested{},
		want: []sm.Action{
			skipped(at(1*minute), at(5*minute), 5, sm.SkipPaused),
			skipped(at(6*minute), at(9*minute), 4, sm.SkipSuperseded),
			record(occ(at(10*minute)), 1, sm.StatusQueued, ""),
			start(occ(at(10*minute)).ID, 1, 11, at(10*minute+30*sec)),
			tickLater(at(11*minute), 12),
		},
		wantJob: sm.JobState{State: sm.Queued, TickNonce: 12, TickAt: at(11 * minute), NextAt: at(11 * minute), Cursor: at(10*minute + 30*sec),
			Active: []sm.Invocation{queuedInv(occ(at(10*minute)), 1, 11, at(10*minute+30*sec))}},
	}, {
		name:  "a resume of an interval job counts the interval from the resume: the pause leaves no run owed",
		expr:  "@every 90s",
		job:   sm.JobState{State: sm.Paused, Cursor: t0, LastEnded: at(30 * sec)},
		now:   at(10 * minute),
		event: sm.ResumeRequested{},
		want:  []sm.Action{tickLater(at(11*minute+30*sec), 11)},
		// Before, the tick was planned at t0+2m, already past: its watchdog
		// timer had passed before the tick was posted.
		wantJob: sm.JobState{State: sm.Scheduled, TickNonce: 11, TickAt: at(11*minute + 30*sec), NextAt: at(11*minute + 30*sec), Cursor: at(10 * minute), LastEnded: at(30 * sec)},
	}, {
		name:    "a resume of a job that is not paused does nothing",
		job:     scheduledAt0,
		now:     at(10 * sec),
		event:   sm.ResumeRequested{},
		wantJob: scheduledAt0,
	}})
}

func TestAbortRequested(t *testing.T) {
	t.Parallel()
	allow := sm.Policy{Overlap: sm.OverlapAllow, MaxConcurrent: 3}
	two := func(j *sm.JobState) {
		j.State = sm.Running
		j.Active = []sm.Invocation{runningInv(occ(at(-1*minute)), 1, 4, at(-1*minute)), queuedInv(occ(t0), 1, 5, t0)}
	}
	runTransitions(t, []transition{{
		name:  "an abort of one running invocation stops the target and records ABORTED",
		job:   withJob(func(j *sm.JobState) { j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, t0)} }),
		now:   at(10 * sec),
		event: sm.AbortRequested{Invocation: occ(t0).ID},
		want: []sm.Action{
			abortTarget(occ(t0).ID, 1),
			record(occ(t0), 1, sm.StatusAborted, "aborted by an admin"),
		},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded = at(10 * sec) }),
	}, {
		name:   "an abort of one leaves the others",
		policy: allow,
		job:    withJob(two),
		now:    at(10 * sec),
		event:  sm.AbortRequested{Invocation: occ(t0).ID},
		want:   []sm.Action{record(occ(t0), 1, sm.StatusAborted, "aborted by an admin")},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.LastEnded = sm.Running, at(10*sec)
			j.Active = []sm.Invocation{runningInv(occ(at(-1*minute)), 1, 4, at(-1*minute))}
		}),
	}, {
		name:   "an abort of all ends every unfinished invocation, the target called only for launched ones",
		policy: allow,
		job:    withJob(two),
		now:    at(10 * sec),
		event:  sm.AbortRequested{},
		want: []sm.Action{
			record(occ(t0), 1, sm.StatusAborted, "aborted by an admin"),
			abortTarget(occ(at(-1*minute)).ID, 1),
			record(occ(at(-1*minute)), 1, sm.StatusAborted, "aborted by an admin"),
		},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded = at(10 * sec) }),
	}, {
		name:   "an abort starts the pending occurrence",
		policy: sm.Policy{Overlap: sm.OverlapQueueOne},
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active, j.Pending = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, t0)}, &o1m
		}),
		now:   at(70 * sec),
		event: sm.AbortRequested{Invocation: occ(t0).ID},
		want: []sm.Action{
			abortTarget(occ(t0).ID, 1),
			record(occ(t0), 1, sm.StatusAborted, "aborted by an admin"),
			record(o1m, 1, sm.StatusQueued, ""),
			start(o1m.ID, 1, 11, at(70*sec)),
		},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.LastEnded = sm.Queued, at(70*sec)
			j.Active = []sm.Invocation{queuedInv(o1m, 1, 11, at(70*sec))}
		}),
	}, {
		name:    "an abort of all with nothing unfinished does nothing",
		job:     scheduledAt0,
		now:     at(10 * sec),
		event:   sm.AbortRequested{},
		wantJob: scheduledAt0,
	}, {
		name:    "an abort of an unknown invocation is refused and changes nothing",
		job:     withJob(func(j *sm.JobState) { j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, t0)} }),
		now:     at(10 * sec),
		event:   sm.AbortRequested{Invocation: o1m.ID},
		refused: true,
	}})
}

func TestStartingAndLaunched(t *testing.T) {
	t.Parallel()
	queued := withJob(func(j *sm.JobState) { j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 5, t0)} })
	launching := withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Running, []sm.Invocation{launchingInv(occ(t0), 1, 5, at(2*sec))}
	})
	running := withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, at(2*sec))}
	})
	backoff := withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Queued, []sm.Invocation{backoffInv(occ(t0), 2, 5, at(20*sec), at(40*sec))}
	})
	id := occ(t0).ID
	runTransitions(t, []transition{{
		name:    "a start of a queued invocation records LAUNCHING, then launches",
		job:     queued,
		now:     at(2 * sec),
		event:   sm.Starting{Invocation: id, Attempt: 1, Nonce: 5},
		want:    []sm.Action{record(occ(t0), 1, sm.StatusLaunching, ""), launch(id, 1)},
		wantJob: launching,
	}, {
		name:    "a start repeated while LAUNCHING asks the target to resolve by key instead of launching",
		job:     launching,
		now:     at(40 * sec),
		event:   sm.Starting{Invocation: id, Attempt: 1, Nonce: 5},
		want:    []sm.Action{resolve(id, 1)},
		wantJob: launching,
	}, {
		name:    "a start repeated once RUNNING does nothing",
		job:     running,
		now:     at(40 * sec),
		event:   sm.Starting{Invocation: id, Attempt: 1, Nonce: 5},
		wantJob: running,
	}, {
		name:    "a start with a stale nonce does nothing",
		job:     queued,
		now:     at(2 * sec),
		event:   sm.Starting{Invocation: id, Attempt: 1, Nonce: 4},
		wantJob: queued,
	}, {
		name:    "a start of another attempt does nothing",
		job:     queued,
		now:     at(2 * sec),
		event:   sm.Starting{Invocation: id, Attempt: 2, Nonce: 5},
		wantJob: queued,
	}, {
		name:    "a start of an unknown invocation does nothing",
		job:     queued,
		now:     at(2 * sec),
		event:   sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 5},
		wantJob: queued,
	}, {
		name:  "a start of a retry before its time re-schedules it at the retry time",
		job:   backoff,
		now:   at(30 * sec),
		event: sm.Starting{Invocation: id, Attempt: 2, Nonce: 5},
		want:  []sm.Action{start(id, 2, 11, at(40*sec))},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{backoffInv(occ(t0), 2, 11, at(30*sec), at(40*sec))}
		}),
	}, {
		name:  "a start of a retry at its time launches the next attempt",
		job:   backoff,
		now:   at(40 * sec),
		event: sm.Starting{Invocation: id, Attempt: 2, Nonce: 5},
		want:  []sm.Action{record(occ(t0), 2, sm.StatusLaunching, ""), launch(id, 2)},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Running, []sm.Invocation{launchingInv(occ(t0), 2, 5, at(40*sec))}
		}),
	}, {
		name:    "Launched moves LAUNCHING to RUNNING and records it",
		job:     launching,
		now:     at(3 * sec),
		event:   sm.Launched{Invocation: id, Attempt: 1},
		want:    []sm.Action{record(occ(t0), 1, sm.StatusRunning, "")},
		wantJob: running,
	}, {
		name:    "Launched again once RUNNING does nothing",
		job:     running,
		now:     at(3 * sec),
		event:   sm.Launched{Invocation: id, Attempt: 1},
		wantJob: running,
	}, {
		name:    "Launched of an invocation not launching does nothing",
		job:     queued,
		now:     at(3 * sec),
		event:   sm.Launched{Invocation: id, Attempt: 1},
		wantJob: queued,
	}})
}

// TestStartingWithinLaunchGrace: a StartInvocation delivered again soon
// after its launch began is turned away with ErrLaunchInProgress (the first
// process may still be on its way to the target, and asking now could hear
// "never launched"); from LaunchGrace on it asks the target.
func TestStartingWithinLaunchGrace(t *testing.T) {
	t.Parallel()
	id := occ(t0).ID
	f := newFixture(t, "* * * * *", sm.Policy{})
	f.m.Job = settled(withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Running, []sm.Invocation{launchingInv(occ(t0), 1, 5, at(2*sec))}
	}))
	f.inProgress(at(2*sec), sm.Starting{Invocation: id, Attempt: 1, Nonce: 5})
	f.inProgress(at(12*sec-1), sm.Starting{Invocation: id, Attempt: 1, Nonce: 5})
	// A stale copy is still no error: it does nothing.
	f.stale(at(3*sec), sm.Starting{Invocation: id, Attempt: 1, Nonce: 4})
	f.step(at(12*sec), sm.Starting{Invocation: id, Attempt: 1, Nonce: 5}, resolve(id, 1))
}

func TestEnded(t *testing.T) {
	t.Parallel()
	id := occ(t0).ID
	running := func(attempt, failures int) sm.JobState {
		return withJob(func(j *sm.JobState) {
			j.State, j.Failures = sm.Running, failures
			j.Active = []sm.Invocation{runningInv(occ(t0), attempt, 5, at(2*sec))}
		})
	}
	retries := sm.Policy{MaxAttempts: 3, MinBackoff: 10 * sec, MaxBackoff: 15 * sec}
	runTransitions(t, []transition{{
		name:    "a success ends the invocation and resets Failures",
		job:     running(1, 2),
		now:     at(30 * sec),
		event:   sm.Ended{Invocation: id, Attempt: 1, Succeeded: true, Message: "ok"},
		want:    []sm.Action{record(occ(t0), 1, sm.StatusSucceeded, "ok")},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded = at(30 * sec) }),
	}, {
		name: "a success of a still LAUNCHING attempt ends it too",
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Running, []sm.Invocation{launchingInv(occ(t0), 1, 5, at(2*sec))}
		}),
		now:     at(30 * sec),
		event:   sm.Ended{Invocation: id, Attempt: 1, Succeeded: true},
		want:    []sm.Action{record(occ(t0), 1, sm.StatusSucceeded, "")},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded = at(30 * sec) }),
	}, {
		name:    "a failure without attempts left is FAILED and counted",
		job:     running(1, 2),
		now:     at(30 * sec),
		event:   sm.Ended{Invocation: id, Attempt: 1, Message: "exit 1"},
		want:    []sm.Action{record(occ(t0), 1, sm.StatusFailed, "exit 1")},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded, j.Failures = at(30*sec), 3 }),
	}, {
		name:   "a failure with attempts left is RETRYING after MinBackoff: same invocation, next attempt",
		policy: retries,
		job:    running(1, 2),
		now:    at(30 * sec),
		event:  sm.Ended{Invocation: id, Attempt: 1, Message: "exit 1"},
		want: []sm.Action{
			record(occ(t0), 2, sm.StatusRetrying, "attempt 1 failed: exit 1; attempt 2 in 10s"),
			start(id, 2, 11, at(40*sec)),
		},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Failures = sm.Queued, 2
			j.Active = []sm.Invocation{backoffInv(occ(t0), 2, 11, at(30*sec), at(40*sec))}
		}),
	}, {
		name:   "the backoff doubles per attempt up to MaxBackoff",
		policy: retries,
		job:    running(2, 0),
		now:    at(30 * sec),
		event:  sm.Ended{Invocation: id, Attempt: 2, Message: "exit 1"},
		want: []sm.Action{
			record(occ(t0), 3, sm.StatusRetrying, "attempt 2 failed: exit 1; attempt 3 in 15s"),
			start(id, 3, 11, at(45*sec)),
		},
		wantJob: withJob(func(j *sm.JobState) {
			j.State = sm.Queued
			j.Active = []sm.Invocation{backoffInv(occ(t0), 3, 11, at(30*sec), at(45*sec))}
		}),
	}, {
		name:    "the last attempt's failure is FAILED",
		policy:  retries,
		job:     running(3, 0),
		now:     at(30 * sec),
		event:   sm.Ended{Invocation: id, Attempt: 3, Message: "exit 1"},
		want:    []sm.Action{record(occ(t0), 3, sm.StatusFailed, "exit 1")},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded, j.Failures = at(30*sec), 1 }),
	}, {
		name:    "an end of another attempt does nothing",
		job:     running(2, 0),
		now:     at(30 * sec),
		event:   sm.Ended{Invocation: id, Attempt: 1, Succeeded: true},
		wantJob: running(2, 0),
	}, {
		name:    "an end of an attempt that was never launched does nothing",
		job:     withJob(func(j *sm.JobState) { j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 5, t0)} }),
		now:     at(30 * sec),
		event:   sm.Ended{Invocation: id, Attempt: 1, Succeeded: true},
		wantJob: withJob(func(j *sm.JobState) { j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 5, t0)} }),
	}, {
		name:    "an end of an invocation that has ended does nothing",
		job:     scheduledAt0,
		now:     at(30 * sec),
		event:   sm.Ended{Invocation: id, Attempt: 1},
		wantJob: scheduledAt0,
	}})
}

// TestBackoff pins the wait before each attempt: MinBackoff doubling per
// failed attempt, capped by MaxBackoff, uncapped when MaxBackoff is 0.
func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		min, max time.Duration
		want     []time.Duration // after attempt 1, 2, ...
	}{
		{"doubles from MinBackoff and stops at MaxBackoff", 10 * sec, 1 * minute, []time.Duration{10 * sec, 20 * sec, 40 * sec, 1 * minute, 1 * minute}},
		{"a MaxBackoff below MinBackoff caps the first wait too", 10 * sec, 5 * sec, []time.Duration{5 * sec, 5 * sec, 5 * sec}},
		{"a MaxBackoff of 0 means no cap", 10 * sec, 0, []time.Duration{10 * sec, 20 * sec, 40 * sec, 80 * sec}},
		{"a MinBackoff of 0 retries at once", 0, 1 * minute, []time.Duration{0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for i, wait := range c.want {
				attempt := i + 1
				f := newFixture(t, "* * * * *", sm.Policy{MaxAttempts: 100, MinBackoff: c.min, MaxBackoff: c.max})
				f.nonce = 10
				f.m.Job = settled(withJob(func(j *sm.JobState) {
					j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), attempt, 5, at(2*sec))}
				}))
				f.step(at(30*sec), sm.Ended{Invocation: occ(t0).ID, Attempt: attempt, Message: "x"},
					record(occ(t0), attempt+1, sm.StatusRetrying, fmt.Sprintf("attempt %d failed: x; attempt %d in %s", attempt, attempt+1, wait)),
					start(occ(t0).ID, attempt+1, 11, at(30*sec).Add(wait)))
			}
		})
	}
}

func TestNotLaunchedAndOutcomeUnknown(t *testing.T) {
	t.Parallel()
	id := occ(t0).ID
	launching := withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Running, []sm.Invocation{launchingInv(occ(t0), 1, 5, at(2*sec))}
	})
	running := withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Running, []sm.Invocation{runningInv(occ(t0), 1, 5, at(2*sec))}
	})
	relaunched := withJob(func(j *sm.JobState) {
		j.State, j.Active = sm.Running, []sm.Invocation{launchingInv(occ(t0), 1, 5, at(50*sec))}
	})
	runTransitions(t, []transition{{
		name:  "NotLaunched launches the same attempt again, LAUNCHING recorded first",
		job:   launching,
		now:   at(50 * sec),
		event: sm.NotLaunched{Invocation: id, Attempt: 1},
		want: []sm.Action{
			record(occ(t0), 1, sm.StatusLaunching, "the target never received the launch; launching it now"),
			launch(id, 1),
		},
		wantJob: relaunched,
	}, {
		name:    "NotLaunched once RUNNING does nothing",
		job:     running,
		now:     at(50 * sec),
		event:   sm.NotLaunched{Invocation: id, Attempt: 1},
		wantJob: running,
	}, {
		name:    "OutcomeUnknown fails closed: FAILED launch outcome unknown, not relaunched, even with attempts left",
		policy:  sm.Policy{MaxAttempts: 3, MinBackoff: 10 * sec},
		job:     launching,
		now:     at(50 * sec),
		event:   sm.OutcomeUnknown{Invocation: id, Attempt: 1},
		want:    []sm.Action{record(occ(t0), 1, sm.StatusFailed, "launch outcome unknown")},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded, j.Failures = at(50*sec), 1 }),
	}, {
		name:   "OutcomeUnknown of an idempotent target is a failed attempt: the next one starts after the backoff, with the same key",
		policy: sm.Policy{MaxAttempts: 2, MinBackoff: 1 * minute, Idempotent: true},
		job:    launching,
		now:    at(50 * sec),
		event:  sm.OutcomeUnknown{Invocation: id, Attempt: 1},
		want: []sm.Action{
			record(occ(t0), 2, sm.StatusRetrying, "attempt 1 failed: launch outcome unknown; attempt 2 in 1m0s"),
			start(id, 2, 11, at(50*sec+1*minute)),
		},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{backoffInv(occ(t0), 2, 11, at(50*sec), at(50*sec+1*minute))}
		}),
	}, {
		name:   "OutcomeUnknown of an idempotent target's last attempt ends FAILED: max_attempts bounds a launch that kills the server",
		policy: sm.Policy{MaxAttempts: 2, MinBackoff: 1 * minute, Idempotent: true},
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Running, []sm.Invocation{launchingInv(occ(t0), 2, 5, at(2*sec))}
		}),
		now:     at(50 * sec),
		event:   sm.OutcomeUnknown{Invocation: id, Attempt: 2},
		want:    []sm.Action{record(occ(t0), 2, sm.StatusFailed, "launch outcome unknown")},
		wantJob: withJob(func(j *sm.JobState) { j.LastEnded, j.Failures = at(50*sec), 1 }),
	}, {
		name:   "OutcomeUnknown of an idempotent target of a removed job ends FAILED: a DISABLED job launches nothing again",
		policy: sm.Policy{MaxAttempts: 3, Idempotent: true},
		job: withJob(func(j *sm.JobState) {
			j.State, j.Reason = sm.Disabled, sm.Reason{Kind: sm.ReasonRemovedFromConfig}
			j.TickNonce, j.TickAt, j.NextAt = 0, time.Time{}, time.Time{}
			j.Active = []sm.Invocation{launchingInv(occ(t0), 1, 5, at(2*sec))}
		}),
		now:   at(50 * sec),
		event: sm.OutcomeUnknown{Invocation: id, Attempt: 1},
		want:  []sm.Action{record(occ(t0), 1, sm.StatusFailed, "launch outcome unknown")},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Reason = sm.Disabled, sm.Reason{Kind: sm.ReasonRemovedFromConfig}
			j.TickNonce, j.TickAt, j.NextAt = 0, time.Time{}, time.Time{}
			j.LastEnded, j.Failures = at(50*sec), 1
		}),
	}, {
		name:    "OutcomeUnknown once RUNNING does nothing",
		job:     running,
		now:     at(50 * sec),
		event:   sm.OutcomeUnknown{Invocation: id, Attempt: 1},
		wantJob: running,
	}})
}

func TestWatchdogExpired(t *testing.T) {
	t.Parallel()
	id := occ(t0).ID
	timedOut := "timed out: no outcome 10m30s after the launch"
	running := func(phase sm.Status) sm.JobState {
		return withJob(func(j *sm.JobState) {
			inv := runningInv(occ(t0), 1, 5, at(2*sec))
			inv.Status = phase
			j.State, j.Active, j.TickNonce, j.TickAt, j.NextAt, j.Cursor = sm.Running, []sm.Invocation{inv}, 7, at(20*minute), at(20*minute), at(19*minute)
		})
	}
	after := func(fn func(j *sm.JobState)) sm.JobState {
		j := running(sm.StatusRunning)
		fn(&j)
		return j
	}
	hardTimeout := at(2*sec + 10*minute + 30*sec)
	runTransitions(t, []transition{{
		name:    "a lost tick is re-issued now under a new nonce",
		job:     scheduledAt0,
		now:     at(1*minute + 30*sec),
		event:   sm.WatchdogExpired{},
		want:    []sm.Action{tickLater(at(1*minute+30*sec), 11)},
		wantJob: withJob(func(j *sm.JobState) { j.TickNonce, j.TickAt = 11, at(1*minute+30*sec) }),
	}, {
		name:    "a tick still inside its grace is left alone",
		job:     scheduledAt0,
		now:     at(1*minute + 29*sec),
		event:   sm.WatchdogExpired{},
		wantJob: scheduledAt0,
	}, {
		name:  "a lost StartInvocation is re-issued now under a new nonce",
		job:   withJob(func(j *sm.JobState) { j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 5, t0)} }),
		now:   at(30 * sec),
		event: sm.WatchdogExpired{},
		want:  []sm.Action{start(id, 1, 11, at(30*sec))},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 11, at(30*sec))}
		}),
	}, {
		name: "a lost retry StartInvocation is re-issued now",
		job: withJob(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{backoffInv(occ(t0), 2, 5, at(10*sec), at(40*sec))}
		}),
		now:   at(70 * sec),
		event: sm.WatchdogExpired{},
		want:  []sm.Action{start(id, 2, 11, at(70*sec))},
		wantJob: withJob(func(j *sm.JobState) {
			inv := backoffInv(occ(t0), 2, 11, at(70*sec), at(40*sec))
			inv.Deadline = at(100 * sec)
			j.State, j.Active = sm.Queued, []sm.Invocation{inv}
		}),
	}, {
		name:  "a lost tick and a lost StartInvocation are both re-issued in one step",
		job:   withJob(func(j *sm.JobState) { j.State, j.Active = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 5, t0)} }),
		now:   at(90 * sec),
		event: sm.WatchdogExpired{},
		want:  []sm.Action{tickLater(at(90*sec), 11), start(id, 1, 12, at(90*sec))},
		wantJob: withJob(func(j *sm.JobState) {
			j.State, j.Active, j.TickNonce, j.TickAt = sm.Queued, []sm.Invocation{queuedInv(occ(t0), 1, 12, at(90*sec))}, 11, at(90*sec)
		}),
	}, {
		name:    "a running attempt before its hard timeout is left alone",
		job:     running(sm.StatusRunning),
		now:     hardTimeout.Add(-1),
		event:   sm.WatchdogExpired{},
		wantJob: running(sm.StatusRunning),
	}, {
		name:    "a RUNNING attempt past its hard timeout is aborted and FAILED: timed out",
		job:     running(sm.StatusRunning),
		now:     hardTimeout,
		event:   sm.WatchdogExpired{},
		want:    []sm.Action{abortTarget(id, 1), record(occ(t0), 1, sm.StatusFailed, timedOut)},
		wantJob: after(func(j *sm.JobState) { j.State, j.Active, j.Failures, j.LastEnded = sm.Scheduled, nil, 1, hardTimeout }),
	}, {
		name:   "a RUNNING attempt past its hard timeout is retried when attempts are left",
		policy: sm.Policy{MaxAttempts: 2, MinBackoff: 1 * minute},
		job:    running(sm.StatusRunning),
		now:    hardTimeout,
		event:  sm.WatchdogExpired{},
		want: []sm.Action{
			abortTarget(id, 1),
			record(occ(t0), 2, sm.StatusRetrying, "attempt 1 failed: "+timedOut+"; attempt 2 in 1m0s"),
			start(id, 2, 11, hardTimeout.Add(1*minute)),
		},
		wantJob: after(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{backoffInv(occ(t0), 2, 11, hardTimeout, hardTimeout.Add(1*minute))}
		}),
	}, {
		name:    "a LAUNCHING attempt past its hard timeout is FAILED and not retried: the launch may have happened",
		policy:  sm.Policy{MaxAttempts: 2, MinBackoff: 1 * minute},
		job:     running(sm.StatusLaunching),
		now:     hardTimeout,
		event:   sm.WatchdogExpired{},
		want:    []sm.Action{abortTarget(id, 1), record(occ(t0), 1, sm.StatusFailed, timedOut)},
		wantJob: after(func(j *sm.JobState) { j.State, j.Active, j.Failures, j.LastEnded = sm.Scheduled, nil, 1, hardTimeout }),
	}, {
		name:   "a LAUNCHING attempt past its hard timeout is retried when the target is idempotent",
		policy: sm.Policy{MaxAttempts: 2, MinBackoff: 1 * minute, Idempotent: true},
		job:    running(sm.StatusLaunching),
		now:    hardTimeout,
		event:  sm.WatchdogExpired{},
		want: []sm.Action{
			abortTarget(id, 1),
			record(occ(t0), 2, sm.StatusRetrying, "attempt 1 failed: "+timedOut+"; attempt 2 in 1m0s"),
			start(id, 2, 11, hardTimeout.Add(1*minute)),
		},
		wantJob: after(func(j *sm.JobState) {
			j.State, j.Active = sm.Queued, []sm.Invocation{backoffInv(occ(t0), 2, 11, hardTimeout, hardTimeout.Add(1*minute))}
		}),
	}, {
		name:    "a watchdog with nothing overdue does nothing",
		job:     scheduledAt0,
		now:     at(10 * sec),
		event:   sm.WatchdogExpired{},
		wantJob: scheduledAt0,
	}})
}

func TestRedefining(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{Jitter: 30 * sec})
	f.step(t0, sm.Defined{}, tickLater(at(1*minute).Add(sm.Jitter(f.m.JobID, at(1*minute), 30*sec)), 1))
	// The 10:01 occurrence is due, its tick waits for its jitter, and the
	// definition changes: the occurrence runs under the old definition
	// instead of vanishing with it.
	now := at(1*minute + sm.Jitter(f.m.JobID, at(1*minute), 30*sec)/2)
	f.step(now, sm.Redefining{},
		record(occ(at(1*minute)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(at(1*minute)), 1, 2, now))
	f.step(now, sm.Defined{}, tickLater(at(2*minute).Add(sm.Jitter(f.m.JobID, at(2*minute), 30*sec)), 3))

	// A paused job keeps its cursor for the resume: nothing to settle.
	p := newFixture(t, "* * * * *", sm.Policy{})
	p.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
	p.step(at(10*sec), sm.PauseRequested{Note: "admin"})
	p.step(at(3*minute), sm.Redefining{})
}

// The trigger id is read back only from what TriggerID makes.
func TestTriggerNumberReadsOnlyTriggerIDs(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 9, 10, 1 << 40} {
		if got, ok := sm.TriggerNumber(sm.TriggerID(n)); !ok || got != n {
			t.Errorf("TriggerNumber(TriggerID(%d)) = %d, %v", n, got, ok)
		}
	}
	for _, id := range []string{"manual-", "manual-0", "manual-01", "manual--1", "manual-1x", "20260302T100000Z", "x-manual-1"} {
		if n, ok := sm.TriggerNumber(id); ok {
			t.Errorf("TriggerNumber(%q) = %d, true; want false", id, n)
		}
	}
}
