package postgres

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/pgtest"
)

// openTwo opens two stores on one new database, as two instances would.
func openTwo(t *testing.T) (a, b *Store, url string) {
	t.Helper()
	url = pgtest.Shared(t).Database(t)
	for _, s := range []**Store{&a, &b} {
		var err error
		if *s, err = Open(t.Context(), url, Options{MaxConns: 8}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*s).Close() })
	}
	return a, b, url
}

// TestAPassRunsOncePerPeriodAcrossTheFleet: instances asking at once, and
// asking again within the period, get one turn between them; the next
// period brings one more.
func TestAPassRunsOncePerPeriodAcrossTheFleet(t *testing.T) {
	t.Parallel()
	a, b, _ := openTwo(t)
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	turns := func(at time.Time) int {
		var n atomic.Int32
		var wg sync.WaitGroup
		for i := range 16 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				ok, err := s.TakeTurn(t.Context(), "watchdog", at.Add(time.Duration(i)*time.Second), time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					n.Add(1)
				}
			})
		}
		wg.Wait()
		return int(n.Load())
	}
	for i, at := range []time.Time{t0.Add(5 * time.Second), t0.Add(40 * time.Second), t0.Add(time.Minute), t0.Add(3 * time.Minute)} {
		want := 1
		if i == 1 {
			want = 0 // the period of t0+5s, taken already
		}
		if got := turns(at); got != want {
			t.Errorf("instances asking at %s took %d turns, want %d", at.Format(time.TimeOnly), got, want)
		}
	}
	if ok, err := a.TakeTurn(t.Context(), "retention", t0.Add(40*time.Second), time.Minute); err != nil || !ok {
		t.Errorf("another pass's first turn in a taken period: %v, %v; want it (each pass has its own)", ok, err)
	}
}

// TestARevocationReachesEveryInstance: a session ended on one instance is
// refused by the other, until it expires.
func TestARevocationReachesEveryInstance(t *testing.T) {
	t.Parallel()
	a, b, _ := openTwo(t)
	now := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ra, rb := a.NewRevocations(clock), b.NewRevocations(clock)
	if err := ra.Revoke(t.Context(), "session:x", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := ra.Revoke(t.Context(), "session:x", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{now, true}, {now.Add(59 * time.Minute), true}, {now.Add(time.Hour), false}} {
		now = c.at
		if got, err := rb.Revoked(t.Context(), "session:x"); err != nil || got != c.want {
			t.Errorf("revoked at %s on the other instance: %v (%v), want %v", c.at.Format(time.TimeOnly), got, err, c.want)
		}
	}
	if got, err := rb.Revoked(t.Context(), "session:y"); err != nil || got {
		t.Errorf("a session never revoked reads revoked: %v (%v)", got, err)
	}
}

// TestAnAnnouncedTaskWakesAnotherInstance: a task one instance announces
// reaches the other's listener with its ETA; one due no earlier than one
// announced and still to come is not announced again.
func TestAnAnnouncedTaskWakesAnotherInstance(t *testing.T) {
	t.Parallel()
	a, _, url := openTwo(t)
	now := time.Now()
	woken := make(chan time.Time, 16)
	listening := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go Listen(ctx, url, func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)), func(eta time.Time) {
		if eta.Equal(now) {
			listening <- struct{}{} // the call for what may have been missed
			return
		}
		woken <- eta
	})
	<-listening
	ann := a.NewAnnouncer(func() time.Time { return now })
	first := now.Add(30 * time.Second)
	for _, eta := range []time.Time{first, first.Add(time.Second), first.Add(-time.Second)} {
		if err := ann.Announce(t.Context(), eta); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []time.Time{first, first.Add(-time.Second)} {
		select {
		case got := <-woken:
			if !got.Equal(want) {
				t.Errorf("woken for %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no wake-up for %s", want)
		}
	}
	select {
	case got := <-woken:
		t.Errorf("woken for %s, announced behind an earlier one still to come", got)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestARestoredDatabaseIsNoticed: the database loaded by pg_dump into
// another cluster is taken for restored at its first start there, with
// that start's time every later start too; the original is not.
func TestARestoredDatabaseIsNoticed(t *testing.T) {
	t.Parallel()
	a, _, url := openTwo(t)
	t1 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	for i := range 2 {
		if got, err := a.Restored(t.Context(), t1.Add(time.Duration(i)*time.Hour)); err != nil || !got.IsZero() {
			t.Fatalf("the original database: restored %v (%v), want not", got, err)
		}
	}
	pgDump, err := pgtest.Binary("pg_dump")
	if err != nil {
		t.Skip(err)
	}
	dump := filepath.Join(t.TempDir(), "dump.sql")
	if out, err := exec.Command(pgDump, "--no-owner", "-f", dump, url).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	copyURL := pgtest.Own(t).Database(t)
	psql, err := pgtest.Binary("psql")
	if err != nil {
		t.Skip(err)
	}
	if out, err := exec.Command(psql, "-q", "-v", "ON_ERROR_STOP=1", "-f", dump, copyURL).CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	restored, err := Open(t.Context(), copyURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	for i := range 2 {
		if got, err := restored.Restored(t.Context(), t1.Add(time.Duration(i+2)*time.Hour)); err != nil || !got.Equal(t1.Add(2*time.Hour)) {
			t.Errorf("start %d on the restored copy: restored %v (%v), want at its first start, %v", i+1, got, err, t1.Add(2*time.Hour))
		}
	}
}
