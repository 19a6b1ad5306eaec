package engine_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task/local"
)

// What the wall clock stepping under a running Sundial does (issue 36,
// finding 17; docs/defenses.md, "The wall clock steps"): an NTP step or a
// VM resumed from a snapshot moves the clock every process on the host
// reads, back or forward, while they run.

// embeddedConfig is the engine's configuration in the embedded shape
// (server.embeddedConfig): a StartInvocation that comes again is taken
// for one whose process died, and asked about after a second.
func embeddedConfig() statemachine.Config {
	c := statemachine.DefaultConfig
	c.LaunchGrace = time.Second
	return c
}

// runningProcess is one server process of the embedded shape over a
// database file: its engine and a dispatcher running (Run) with the lock
// directory the server gives it, on the shared clock. idle receives the
// times Run tells Options.Idle it sleeps until.
type runningProcess struct {
	eng  *engine.Engine
	idle chan time.Time
}

// runProcess starts a process as owner on the database at path, with
// that many workers; it stops when ctx ends, and the returned channel is
// closed once Run returned.
func runProcess(ctx context.Context, t *testing.T, path string, clk *fakeclock.Clock, owner string, workers int, tgt *recorder, ends *endCounter) (*runningProcess, <-chan struct{}) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	q := &enginetest.LateQueue{}
	p := &runningProcess{idle: make(chan time.Time, 1000)}
	p.eng = engine.New(st, q, map[string]targets.Target{"rec": tgt, "blind": blind{tgt}}, engine.Options{Now: clk.Now, Config: embeddedConfig(), Observer: ends})
	// Run waits on real timers for the fake clock's durations: short ones,
	// so that it looks again soon after the test moves the clock.
	disp := local.New(st, p.eng.HandleTask, local.Options{
		Owner: owner, Workers: workers, LockDir: path + ".owners", Now: clk.Now, Logger: slog.New(slog.DiscardHandler),
		Heartbeat: 10 * time.Millisecond, Poll: 10 * time.Millisecond, OrphanAfter: 10 * time.Second,
		Idle: func(until time.Time) {
			select {
			case p.idle <- until:
			default:
			}
		},
	})
	q.Queue = disp
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := disp.Run(ctx); err != nil {
			t.Errorf("%s: Run: %v", owner, err)
		}
	}()
	return p, stopped
}

// idleSince waits for p to go to sleep with nothing in hand after a look
// at the table at from or later.
func idleSince(t *testing.T, p *runningProcess, from time.Time) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case until := <-p.idle:
			if !until.Before(from) {
				return
			}
		case <-timeout:
			t.Fatalf("the process did not look at the table after %v", from)
		}
	}
}

// The wall clock steps an hour forward while process A is in the call of
// a launch. Process B, on the same file, must not take A's task for one
// whose process died: A's lease and heartbeat in the rows are an hour old
// by the clock, yet A lives and works. Before, B ran the task again and,
// the launch being older than the LaunchGrace by the clock, asked the
// target: one that can tell heard "never received" (A had not reached it
// yet) and was launched twice; one that cannot ended FAILED "launch
// outcome unknown" while A's launch went on.
func TestAForwardStepDoesNotDeliverALaunchUnderWayAgain(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"rec", "blind"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			clk := fakeclock.New(t0)
			path := filepath.Join(t.TempDir(), "sundial.db")
			tgt := newRecorder()
			ends := &endCounter{ends: map[string][]statemachine.Status{}}
			// A's launch stops in the target's call until released; any
			// other goes through.
			entered, release := make(chan struct{}), make(chan struct{})
			var calls atomic.Int32
			tgt.check = func(targets.Request) {
				if calls.Add(1) == 1 {
					close(entered)
					<-release
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// A's one worker is in the call: A claims nothing more, and
			// B is the first to claim after the step.
			a, stoppedA := runProcess(ctx, t, path, clk, "A", 1, tgt, ends)
			const id = "p/j"
			if err := a.eng.Define(ctx, id, engine.Definition{Schedule: "* * * * *", Target: kind, Policy: statemachine.Policy{Timeout: 2 * time.Hour}}); err != nil {
				t.Fatal(err)
			}
			clk.Set(t0.Add(time.Minute))
			select {
			case <-entered:
			case <-time.After(time.Minute):
				t.Fatal("A never launched the occurrence")
			}
			b, stoppedB := runProcess(ctx, t, path, clk, "B", 4, tgt, ends)
			idleSince(t, b, t0.Add(time.Minute))

			stepped := t0.Add(time.Minute + time.Hour)
			clk.Set(stepped)
			idleSince(t, b, stepped)
			close(release)
			idleSince(t, a, stepped)
			cancel()
			<-stoppedA
			<-stoppedB

			key := id + "/" + statemachine.OccurrenceID(t0.Add(time.Minute))
			if n := tgt.count(key, 1); n != 1 {
				t.Errorf("the occurrence's attempt was launched %d times; want once", n)
			}
			if got := ends.of(id); len(got) != 1 || got[0] != statemachine.StatusSucceeded {
				t.Errorf("the invocation ended %v; want SUCCEEDED once, as A's launch did", got)
			}
		})
	}
}
