// Package rowstest is the conformance suite of taskrows.Rows, the task rows
// task/local's dispatcher works on: claims, leases, owners' heartbeats and
// adoption, as taskrows.Rows documents them. An implementation runs Run from
// its tests, as *sqlite.Store and *postgres.Store do.
package rowstest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// Store is what the suite needs: the rows, the store transactions that
// enqueue them, and a listing of what is queued.
type Store interface {
	taskrows.Rows
	Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error)
	// Tasks lists up to limit queued tasks, earliest ETA first, held ones
	// included, with the ETAs they have now.
	Tasks(ctx context.Context, limit int) ([]task.Task, error)
}

// Run runs the suite. open returns a new, empty store and closes it when
// the test ends. Subtests run in parallel, each on its own store.
func Run(t *testing.T, open func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"a claim takes due tasks earliest first, up to Max, and says when the next is due", testClaimDue},
		{"a live owner's claim holds until its lease ends", testLeaseHolds},
		{"a silent owner's claims are free after OrphanAfter, a forgotten one's at once", testOrphans},
		{"an owner known alive keeps its claims whatever its lease and heartbeat say", testAlive},
		{"a retry counts a failure and waits; an owner that lost a task cannot hand it back", testAck},
		{"a claim acknowledges and hands back in its transaction", testClaimAcknowledges},
		{"tasks enqueued already due are adopted, claimed by the adopter", testAdoption},
		{"a claim ahead takes what falls due within Ahead, each held from its ETA", testClaimAhead},
		{"a zero Lease or OrphanAfter, or a negative Ahead, is refused", testRefusesZeroDurations},
		{"a claim recovers its owner's tasks of a claim or an adoption whose answer was lost", testRecover},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

var t0 = time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)

const (
	lease  = 10 * time.Minute
	orphan = 30 * time.Second
)

func tick(nonce int64, eta time.Time) task.Task {
	return task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: nonce, ETA: eta}
}

func enqueue(t *testing.T, s Store, tasks ...task.Task) {
	t.Helper()
	if _, err := s.Update(t.Context(), "p/j", func(tx store.Tx) error {
		for _, tk := range tasks {
			if err := tx.Enqueue(tk); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// claim makes c (with the suite's Lease and OrphanAfter unless it has its
// own) and returns what it claimed as "name#failures".
func claim(t *testing.T, s Store, c taskrows.Claim) []string {
	t.Helper()
	if c.Lease == 0 {
		c.Lease, c.OrphanAfter = lease, orphan
	}
	got, next, ok, err := s.ClaimTasks(t.Context(), c)
	if err != nil {
		t.Fatalf("ClaimTasks(%+v): %v", c, err)
	}
	if len(got) < c.Max {
		// Fewer than Max: the claim says what NextDue says after it.
		want, wantOK, err := s.NextDue(t.Context(), c.OrphanAfter, c.Alive...)
		if err != nil || ok != wantOK || !next.Equal(want) {
			t.Errorf("ClaimTasks at %v: next due %v (%v); NextDue after it says %v (%v, %v)", c.Now, next, ok, want, wantOK, err)
		}
	}
	var names []string
	for _, c := range got {
		names = append(names, fmt.Sprintf("%s#%d", c.Name(), c.Failures))
	}
	return names
}

func eq(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: claimed %q, want %q", step, got, want)
	}
}

func nextDue(t *testing.T, s Store, want time.Time) {
	t.Helper()
	got, ok, err := s.NextDue(t.Context(), orphan)
	if err != nil || !ok || !got.Equal(want) {
		t.Errorf("NextDue = %v, %v, %v; want %v", got, ok, err, want)
	}
}

func testClaimDue(t *testing.T, s Store) {
	if _, ok, err := s.NextDue(t.Context(), orphan); err != nil || ok {
		t.Errorf("NextDue with no task = %v, %v; want none", ok, err)
	}
	enqueue(t, s, tick(3, t0.Add(time.Minute)), tick(1, t0), tick(2, t0.Add(time.Second)), tick(4, t0.Add(time.Hour)))
	nextDue(t, s, t0)
	eq(t, "nothing is due before its ETA", claim(t, s, taskrows.Claim{Owner: "A", Now: t0.Add(-time.Nanosecond), Max: 10}))
	eq(t, "Max bounds a claim, earliest first", claim(t, s, taskrows.Claim{Owner: "A", Now: t0.Add(time.Minute), Max: 2}), "p/j/tick/1#0", "p/j/tick/2#0")
	eq(t, "the rest that is due", claim(t, s, taskrows.Claim{Owner: "A", Now: t0.Add(time.Minute), Max: 10}), "p/j/tick/3#0")
	nextDue(t, s, t0.Add(time.Minute+orphan)) // A's claims, should A fall silent now
}

func testLeaseHolds(t *testing.T, s Store) {
	enqueue(t, s, tick(1, t0))
	eq(t, "A claims", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Max: 10}), "p/j/tick/1#0")
	for at := t0; at.Before(t0.Add(lease)); at = at.Add(orphan / 2) {
		if err := s.Heartbeat(t.Context(), "A", at, orphan); err != nil {
			t.Fatal(err)
		}
		if got := claim(t, s, taskrows.Claim{Owner: "B", Now: at, Max: 10}); len(got) != 0 {
			t.Fatalf("at t0+%v B claimed %q from A, alive and within its lease", at.Sub(t0), got)
		}
	}
	if err := s.Heartbeat(t.Context(), "A", t0.Add(lease), orphan); err != nil {
		t.Fatal(err)
	}
	eq(t, "an ended lease frees a live owner's claim", claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(lease), Max: 10}), "p/j/tick/1#0")
}

func testOrphans(t *testing.T, s Store) {
	enqueue(t, s, tick(1, t0), tick(2, t0))
	eq(t, "A claims", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Max: 1}), "p/j/tick/1#0")
	eq(t, "C claims", claim(t, s, taskrows.Claim{Owner: "C", Now: t0, Max: 1}), "p/j/tick/2#0")
	nextDue(t, s, t0.Add(orphan))
	eq(t, "A and C silent for less than OrphanAfter", claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(orphan - time.Nanosecond), Max: 10}))
	if err := s.ForgetOwner(t.Context(), "C"); err != nil {
		t.Fatal(err)
	}
	eq(t, "a forgotten owner's claim is free at once", claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(orphan - time.Nanosecond), Max: 10}), "p/j/tick/2#0")
	eq(t, "a silent owner's claim is free after OrphanAfter", claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(orphan), Max: 10}), "p/j/tick/1#0")
	// A late heartbeat with an older time does not make B look older.
	if err := s.Heartbeat(t.Context(), "B", t0, orphan); err != nil {
		t.Fatal(err)
	}
	eq(t, "B, alive at t0+OrphanAfter, keeps its claims", claim(t, s, taskrows.Claim{Owner: "D", Now: t0.Add(2*orphan - time.Nanosecond), Max: 10}))
}

// testAlive: the wall clock stepped an hour forward. A, known alive,
// keeps its claim, although the lease and A's last heartbeat are an hour
// old by the clock; C, not known alive, loses its. NextDue leaves A's
// task out. Forgotten (known dead), A loses its claim too.
func testAlive(t *testing.T, s Store) {
	enqueue(t, s, tick(1, t0), tick(2, t0))
	eq(t, "A claims", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Max: 1}), "p/j/tick/1#0")
	eq(t, "C claims", claim(t, s, taskrows.Claim{Owner: "C", Now: t0, Max: 1}), "p/j/tick/2#0")
	stepped := t0.Add(time.Hour)
	alive := []string{"A"}
	if got, ok, err := s.NextDue(t.Context(), orphan, alive...); err != nil || !ok || !got.Equal(t0.Add(orphan)) {
		t.Errorf("NextDue with A alive = %v, %v, %v; want C's claim's, free since t0+OrphanAfter", got, ok, err)
	}
	eq(t, "B, sparing A, takes C's claim only", claim(t, s, taskrows.Claim{Owner: "B", Now: stepped, Max: 10, Alive: alive}), "p/j/tick/2#0")
	if got, ok, err := s.NextDue(t.Context(), orphan, alive...); err != nil || !ok || !got.Equal(stepped.Add(orphan)) {
		t.Errorf("NextDue with A's claim and B's = %v, %v, %v; want B's, free should B fall silent now", got, ok, err)
	}
	if err := s.ForgetOwner(t.Context(), "A"); err != nil {
		t.Fatal(err)
	}
	eq(t, "forgotten, A is known dead: its claim is free", claim(t, s, taskrows.Claim{Owner: "B", Now: stepped, Max: 10, Alive: []string{"B"}}), "p/j/tick/1#0")
}

func testAck(t *testing.T, s Store) {
	a, b := tick(1, t0), tick(2, t0)
	enqueue(t, s, a, b)
	eq(t, "A claims", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Max: 10}), "p/j/tick/1#0", "p/j/tick/2#0")
	eq(t, "B takes over A's orphans", claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(orphan), Max: 10}), "p/j/tick/1#0", "p/j/tick/2#0")
	// A, back, can no longer hand back what B holds.
	if err := s.AckTasks(t.Context(), "A", nil, []taskrows.Retry{{Name: a.Name(), ETA: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	retryAt := t0.Add(5 * time.Minute)
	if err := s.AckTasks(t.Context(), "B", []string{a.Name()}, []taskrows.Retry{{Name: b.Name(), ETA: retryAt}}); err != nil {
		t.Fatal(err)
	}
	tasks, err := s.Tasks(t.Context(), 10)
	if err != nil || len(tasks) != 1 || tasks[0].Name() != b.Name() || !tasks[0].ETA.Equal(retryAt) {
		t.Fatalf("queued after the acks: %v, %v; want only %s, at its retry", tasks, err, b.Name())
	}
	nextDue(t, s, retryAt)
	eq(t, "a retry waits for its ETA", claim(t, s, taskrows.Claim{Owner: "B", Now: retryAt.Add(-time.Nanosecond), Max: 10}))
	eq(t, "a retry counts its failure", claim(t, s, taskrows.Claim{Owner: "B", Now: retryAt, Max: 10}), "p/j/tick/2#1")
}

func testClaimAcknowledges(t *testing.T, s Store) {
	a, b, c := tick(1, t0), tick(2, t0), tick(3, t0)
	enqueue(t, s, a, b, c)
	eq(t, "A claims", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Max: 10}), "p/j/tick/1#0", "p/j/tick/2#0", "p/j/tick/3#0")
	got := claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Max: 10,
		Done: []string{a.Name()}, Retry: []taskrows.Retry{{Name: b.Name(), ETA: t0.Add(time.Minute)}}, Release: []string{c.Name()}})
	eq(t, "the claim that settles them takes the released one again, failures unchanged", got, "p/j/tick/3#0")
	tasks, err := s.Tasks(t.Context(), 10)
	if err != nil || len(tasks) != 2 || tasks[0].Name() != c.Name() || tasks[1].Name() != b.Name() || !tasks[1].ETA.Equal(t0.Add(time.Minute)) {
		t.Errorf("queued after the claim: %v, %v; want %s, then %s a minute later", tasks, err, c.Name(), b.Name())
	}
}

func testAdoption(t *testing.T, s Store) {
	var adopted []string
	s.Adopt(&taskrows.Adoption{Owner: "A", Lease: lease, Now: func() time.Time { return t0 },
		Adopted: func(tasks []task.Task) {
			for _, tk := range tasks {
				adopted = append(adopted, tk.Name())
			}
		}})
	due, later := tick(1, t0), tick(2, t0.Add(time.Second))
	enqueue(t, s, due, later)
	if !slices.Equal(adopted, []string{due.Name()}) {
		t.Errorf("adopted %q, want only the due %s", adopted, due.Name())
	}
	eq(t, "the adopted task is A's", claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(time.Second), Max: 10}), "p/j/tick/2#0")

	adopted = nil
	enqueue(t, s, tick(2, t0))
	if len(adopted) != 0 {
		t.Errorf("a repeat of a queued task was adopted: %q", adopted)
	}
	eq(t, "A hands it back", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Release: []string{due.Name()}}))
	eq(t, "free at once, failures unchanged", claim(t, s, taskrows.Claim{Owner: "B", Now: t0, Max: 10}), "p/j/tick/1#0")

	s.Adopt(nil)
	enqueue(t, s, tick(3, t0))
	if len(adopted) != 0 {
		t.Errorf("adopted %q after Adopt(nil)", adopted)
	}
	eq(t, "not adopted, free", claim(t, s, taskrows.Claim{Owner: "C", Now: t0, Max: 10}), "p/j/tick/3#0")
}

func testClaimAhead(t *testing.T, s Store) {
	enqueue(t, s, tick(1, t0), tick(2, t0.Add(time.Second)), tick(3, t0.Add(time.Hour)))
	// Owners that never fall silent here: only leases free claims.
	alive := 24 * time.Hour
	eq(t, "A claims what is due and what falls due within a second", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Ahead: time.Second, Max: 10, Lease: lease, OrphanAfter: alive}),
		"p/j/tick/1#0", "p/j/tick/2#0")
	eq(t, "B takes the task A held since t0 when its lease ends, not the one A holds from its ETA",
		claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(lease + time.Second - time.Nanosecond), Max: 10, Lease: lease, OrphanAfter: alive}), "p/j/tick/1#0")
	eq(t, "the lease of a task claimed ahead ends Lease after its ETA",
		claim(t, s, taskrows.Claim{Owner: "B", Now: t0.Add(lease + time.Second), Max: 10, Lease: lease, OrphanAfter: alive}), "p/j/tick/2#0")
}

func testRefusesZeroDurations(t *testing.T, s Store) {
	enqueue(t, s, tick(1, t0))
	for _, c := range []taskrows.Claim{
		{Owner: "A", Now: t0, Max: 1, OrphanAfter: orphan},
		{Owner: "A", Now: t0, Max: 1, Lease: lease},
		{Owner: "A", Now: t0, Max: 1, Lease: lease, OrphanAfter: orphan, Ahead: -time.Nanosecond},
	} {
		if _, _, _, err := s.ClaimTasks(t.Context(), c); err == nil {
			t.Errorf("ClaimTasks(Lease %v, OrphanAfter %v, Ahead %v) succeeded", c.Lease, c.OrphanAfter, c.Ahead)
		}
	}
	if err := s.Heartbeat(t.Context(), "A", t0, 0); err == nil {
		t.Error("Heartbeat with a zero orphanAfter succeeded")
	}
	eq(t, "the refused claims took nothing", claim(t, s, taskrows.Claim{Owner: "B", Now: t0, Max: 10}), "p/j/tick/1#0")
}

// A claim's or an adoption's commit whose answer was lost (a connection
// cut, a database that crashed after committing) may have left tasks
// claimed by an owner that does not know it: a claim naming its clock
// reading in Recover takes them again, and no other of the owner's
// tasks, but for those it holds from an ETA after that reading.
func testRecover(t *testing.T, s Store) {
	t1, t2 := t0.Add(10*time.Second), t0.Add(20*time.Second)
	enqueue(t, s, tick(1, t0), tick(2, t0.Add(time.Second)), tick(3, t1), tick(4, t1.Add(500*time.Millisecond)), tick(5, t0.Add(time.Hour)))
	eq(t, "A claims at t0, a second ahead", claim(t, s, taskrows.Claim{Owner: "A", Now: t0, Ahead: time.Second, Max: 10}), "p/j/tick/1#0", "p/j/tick/2#0")
	eq(t, "A claims at t1, a second ahead: the claim whose answer is lost", claim(t, s, taskrows.Claim{Owner: "A", Now: t1, Ahead: time.Second, Max: 10}), "p/j/tick/3#0", "p/j/tick/4#0")
	eq(t, "without Recover, A's claims hold against A", claim(t, s, taskrows.Claim{Owner: "A", Now: t2, Max: 10}))
	eq(t, "nor does B take them", claim(t, s, taskrows.Claim{Owner: "B", Now: t2, Max: 10}))
	eq(t, "Recover t1+1s, after those tasks' ETAs, names no claim", claim(t, s, taskrows.Claim{Owner: "A", Now: t2, Max: 10, Recover: []time.Time{t1.Add(time.Second)}}))
	eq(t, "B's Recover t1 takes nothing of A's", claim(t, s, taskrows.Claim{Owner: "B", Now: t2, Max: 10, Recover: []time.Time{t1}}))
	eq(t, "A's Recover t1 takes the claim of t1 again, not the one of t0", claim(t, s, taskrows.Claim{Owner: "A", Now: t2, Max: 10, Recover: []time.Time{t1}}),
		"p/j/tick/3#0", "p/j/tick/4#0")
	eq(t, "held again from t2: not taken by B before t2+Lease", claim(t, s, taskrows.Claim{Owner: "B", Now: t2.Add(lease - time.Nanosecond), Max: 10, OrphanAfter: 24 * time.Hour, Lease: lease}),
		"p/j/tick/1#0", "p/j/tick/2#0")

	t3 := t0.Add(30 * time.Second)
	var lost []time.Time
	s.Adopt(&taskrows.Adoption{Owner: "A", Lease: lease, Now: func() time.Time { return t3 },
		Adopted: func([]task.Task) {}, Lost: func(at time.Time) { lost = append(lost, at) }})
	enqueue(t, s, tick(6, t0.Add(25*time.Second)))
	s.Adopt(nil)
	if len(lost) != 0 {
		t.Errorf("an adoption that committed and was answered is reported lost at %v", lost)
	}
	eq(t, "an adoption's reading as Recover takes its task again", claim(t, s, taskrows.Claim{Owner: "A", Now: t3.Add(time.Second), Max: 10, Recover: []time.Time{t1, t3}}), "p/j/tick/6#0")
}
