package statemachine_test

import (
	"testing"

	sm "github.com/sundial-cron/sundial/statemachine"
)

const restoredMsg = "restored from a backup: this invocation may have launched after the backup was taken, so it does not launch again"

// TestRestoredAt: on a database restored from a backup, what the backup
// held as due or queued does not launch (it may have run after the backup
// was taken); what is scheduled from the first start on runs as usual.
func TestRestoredAt(t *testing.T) {
	t.Parallel()
	restored := at(5*minute + 30*sec)
	policy := sm.Policy{Overlap: sm.OverlapSkip, MaxAttempts: 3, MinBackoff: 10 * sec, MaxBackoff: minute, CatchupWindow: hour}

	t.Run("occurrences due before the first start are missed, even within the catch-up window", func(t *testing.T) {
		f := newFixture(t, "* * * * *", policy)
		f.m.Config.RestoredAt = restored
		f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
		f.step(restored, sm.Tick{Nonce: 1},
			skipped(at(1*minute), at(4*minute), 4, sm.SkipSuperseded),
			skippedOne(occ(at(5*minute)), sm.SkipMissed),
			tickLater(at(6*minute), 2))
		f.step(at(6*minute), sm.Tick{Nonce: 2},
			record(occ(at(6*minute)), 1, sm.StatusQueued, ""),
			start(sm.OccurrenceID(at(6*minute)), 1, 3, at(6*minute)),
			tickLater(at(7*minute), 4))
	})

	t.Run("an interval occurrence due before the first start is missed", func(t *testing.T) {
		f := newFixture(t, "@every 2m", policy)
		f.m.Config.RestoredAt = restored
		f.step(t0, sm.Defined{}, tickLater(at(2*minute), 1))
		// An interval job's next occurrence after a late one is now: the
		// first start itself, which is not before it, so it runs.
		f.step(restored, sm.Tick{Nonce: 1}, skippedOne(occ(at(2*minute)), sm.SkipMissed), tickLater(restored, 2))
		f.step(restored, sm.Tick{Nonce: 2},
			record(occ(restored), 1, sm.StatusQueued, ""),
			start(sm.OccurrenceID(restored), 1, 3, restored))
	})

	t.Run("a queued invocation of the backup ends ABORTED instead of launching", func(t *testing.T) {
		f := newFixture(t, "* * * * *", policy)
		o := occ(at(5 * minute))
		f.job().State, f.job().Active = sm.Queued, []sm.Invocation{queuedInv(o, 1, 7, at(5*minute))}
		f.job().TickNonce, f.job().TickAt, f.job().NextAt, f.job().Cursor = 8, at(6*minute), at(6*minute), at(5*minute)
		f.m.Config.RestoredAt = restored
		f.step(restored, sm.Starting{Invocation: o.ID, Attempt: 1, Nonce: 7}, record(o, 1, sm.StatusAborted, restoredMsg))
		f.state(sm.Scheduled)
	})

	t.Run("a retrying invocation of the backup ends ABORTED instead of its next attempt", func(t *testing.T) {
		f := newFixture(t, "* * * * *", policy)
		o := occ(at(5 * minute))
		f.job().State, f.job().Active = sm.Queued, []sm.Invocation{backoffInv(o, 2, 7, at(5*minute), at(5*minute+10*sec))}
		f.job().TickNonce, f.job().TickAt, f.job().NextAt, f.job().Cursor = 8, at(6*minute), at(6*minute), at(5*minute)
		f.m.Config.RestoredAt = restored
		f.step(restored, sm.Starting{Invocation: o.ID, Attempt: 2, Nonce: 7}, record(o, 2, sm.StatusAborted, restoredMsg))
	})

	t.Run("a manual trigger after the first start launches", func(t *testing.T) {
		f := newFixture(t, "* * * * *", policy)
		f.m.Config.RestoredAt = restored
		f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
		o := manual(1, restored)
		f.step(restored, sm.Triggered{}, record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 2, restored))
		f.step(restored, sm.Starting{Invocation: o.ID, Attempt: 1, Nonce: 2}, record(o, 1, sm.StatusLaunching, ""), launch(o.ID, 1))
	})
}
