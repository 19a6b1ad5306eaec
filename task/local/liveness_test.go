package local

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// holdLockEnv makes the test binary a process that locks an owner file as a
// dispatcher does, says so, and waits to be killed.
const holdLockEnv = "SUNDIAL_TEST_HOLD_OWNER_LOCK"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdLockEnv); path != "" {
		if _, err := lockOwner(filepath.Dir(path), filepath.Base(path)); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		select {}
	}
	os.Exit(m.Run())
}

// startOwner starts a real process that holds owner's lock in dir, and
// returns it once the lock is held.
func startOwner(t *testing.T, dir, owner string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+filepath.Join(dir, owner))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the owner process said %q, %v", line, err)
	}
	return cmd
}

// A claim of a live process stays its own however long its lease and
// heartbeat allow; the moment its process is killed, the next dispatcher's
// heartbeat frees it. The lease and OrphanAfter are an hour, so only the
// lock can have told.
func TestReapFreesTheClaimsOfAKilledProcessAtOnce(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	dir := t.TempDir()
	now := time.Now()
	enqueue(t, s, tick(1, now))
	owner := startOwner(t, dir, "other")
	claim := func(who string) int {
		t.Helper()
		c, _, _, err := s.ClaimTasks(t.Context(), taskrows.Claim{Owner: who, Now: now, Max: 1, Lease: time.Hour, OrphanAfter: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return len(c)
	}
	if n := claim("other"); n != 1 {
		t.Fatalf("the other owner claimed %d tasks; want 1", n)
	}
	d := New(s, nil, Options{Now: time.Now, LockDir: dir, OrphanAfter: time.Hour, Logger: quiet})

	if err := d.reapDead(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := claim(d.opts.Owner); n != 0 {
		t.Fatalf("while its owner lives, %d of its claims were taken; want 0", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); err != nil {
		t.Fatalf("a live owner's file: %v", err)
	}

	owner.Process.Kill()
	owner.Wait()
	if err := d.reapDead(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := claim(d.opts.Owner); n != 1 {
		t.Fatalf("after its owner was killed, %d of its claims were taken; want 1", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); !os.IsNotExist(err) {
		t.Fatalf("a dead owner's file is still there: %v", err)
	}
}

// Run with a LockDir takes a killed process's task without waiting out its
// heartbeat, and leaves no file of its own behind when it stops.
func TestRunTakesOverAKilledProcessesTaskAtOnce(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	dir := t.TempDir()
	enqueue(t, s, tick(1, time.Now()))
	owner := startOwner(t, dir, "killed")
	if c, _, _, err := s.ClaimTasks(t.Context(), taskrows.Claim{Owner: "killed", Now: time.Now(), Max: 1, Lease: time.Hour, OrphanAfter: time.Hour}); err != nil || len(c) != 1 {
		t.Fatalf("the killed owner's claim = %v, %v", c, err)
	}
	owner.Process.Kill()
	owner.Wait()

	handled := make(chan struct{})
	d := New(s, func(context.Context, task.Task) error { close(handled); return nil },
		Options{Now: time.Now, LockDir: dir, OrphanAfter: time.Hour, Logger: quiet})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	select {
	case <-handled:
	case <-time.After(time.Minute): // far beyond a heartbeat; far below OrphanAfter
		t.Fatal("the killed process's task was not taken over")
	}
	cancel()
	<-stopped
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("lock files left after Run stopped: %v", left)
	}
}

// Two owners cannot hold one name's lock: the second is refused.
func TestLockOwnerIsExclusive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startOwner(t, dir, "taken")
	if f, err := lockOwner(dir, "taken"); err == nil {
		f.Close()
		t.Fatal("a second lock of a held owner file succeeded")
	}
}

// The wall clock steps an hour forward while owner A holds a task: A's
// lease and its last heartbeat in the rows are an hour old by the clock.
// A lives and works (its lock is held and the count in its file moves),
// so B's claims leave its task alone and B's NextDue leaves it out,
// although B's heartbeat forgot A's row. A's count standing still for
// OrphanAfter's worth of B's heartbeats (A stopped, as by SIGSTOP) leaves
// A to its rows again, and B takes the task over, as it does today.
func TestAStepOfTheClockLeavesAWorkingOwnersClaims(t *testing.T) {
	t.Parallel()
	for _, working := range []bool{true, false} {
		t.Run(fmt.Sprintf("working=%v", working), func(t *testing.T) {
			t.Parallel()
			s := tempStore(t)
			dir := t.TempDir()
			opts := Options{Now: fakeClock(t), LockDir: dir, Heartbeat: 5 * time.Second, OrphanAfter: 30 * time.Second, Lease: 10 * time.Minute, Logger: quiet}
			a := New(s, nil, withOwner(opts, "A"))
			lock, err := lockOwner(dir, "A")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lock.Close() })
			enqueue(t, s, tick(1, t0))
			if c, _, _, err := s.ClaimTasks(t.Context(), a.claimOf(t0, 1)); err != nil || len(c) != 1 {
				t.Fatalf("A's claim = %v, %v", c, err)
			}
			b := New(s, nil, withOwner(opts, "B"))
			heartbeat := func(d *Dispatcher, at time.Time) {
				t.Helper()
				must(t, s.Heartbeat(t.Context(), d.opts.Owner, at, d.opts.OrphanAfter))
				if d == a {
					must(t, a.beat(lock))
					return
				}
				must(t, b.reapDead(t.Context()))
			}
			heartbeat(a, t0)
			heartbeat(b, t0)

			stepped := t0.Add(time.Hour)
			// The count B read at t0 stands still, if A does not work,
			// through OrphanAfter's worth of B's heartbeats: six.
			for i := range 6 {
				at := stepped.Add(time.Duration(i) * b.opts.Heartbeat)
				if working {
					heartbeat(a, at)
				}
				heartbeat(b, at)
				got, _, _, err := s.ClaimTasks(t.Context(), b.claimOf(at, 10))
				must(t, err)
				if working || i < 5 {
					if len(got) != 0 {
						t.Fatalf("at heartbeat %d after the step B claimed %v from A, whose lock is held and whose count moved within OrphanAfter", i, got)
					}
					if next, ok, err := s.NextDue(t.Context(), b.opts.OrphanAfter, b.alive...); err != nil || ok {
						t.Fatalf("B's NextDue at heartbeat %d after the step = %v, %v, %v; want none: A's claim holds", i, next, ok, err)
					}
					continue
				}
				if len(got) != 1 {
					t.Fatalf("B claimed %v once A's count stood still for OrphanAfter's worth of heartbeats; want A's task", got)
				}
			}
		})
	}
}

func withOwner(o Options, owner string) Options {
	o.Owner = owner
	return o
}

// Run counts each heartbeat into its lock file, where the other owners
// read that it works: the count moves with the heartbeats, which come by
// Run's clock, and with nothing else.
func TestRunCountsItsHeartbeatsIntoItsLockFile(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	dir := t.TempDir()
	clk := fakeclock.New(t0)
	d := New(s, func(context.Context, task.Task) error { return nil },
		Options{Owner: "A", Now: clk.Now, LockDir: dir, Heartbeat: 10 * time.Millisecond, Poll: 10 * time.Millisecond, OrphanAfter: time.Second, Logger: quiet})
	asleep := make(chan struct{}, 1000)
	d.hooks.sleeping = func(time.Time) { asleep <- struct{}{} }
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	defer func() {
		cancel()
		<-stopped
	}()
	count := func() uint64 {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "A"))
		if err != nil || len(b) != 8 {
			t.Fatalf("the lock file holds %x, %v; want a count", b, err)
		}
		return binary.BigEndian.Uint64(b)
	}
	<-asleep
	for want := count() + 1; want < 5; want++ {
		clk.Advance(d.opts.Heartbeat)
		timeout := time.After(time.Minute)
		for count() < want {
			select {
			case <-asleep:
			case <-timeout:
				t.Fatalf("the count stayed at %d after a heartbeat's time; want %d", count(), want)
			}
		}
		if got := count(); got != want {
			t.Fatalf("the count went to %d after one heartbeat's time; want %d", got, want)
		}
	}
}
