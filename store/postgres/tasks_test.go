package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

var t0 = time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)

// planNode is what tasksRowsRead needs of a node of EXPLAIN (ANALYZE,
// FORMAT JSON).
type planNode struct {
	NodeType      string     `json:"Node Type"`
	Relation      string     `json:"Relation Name"`
	Index         string     `json:"Index Name"`
	IndexCond     string     `json:"Index Cond"`
	Rows          float64    `json:"Actual Rows"`
	Loops         float64    `json:"Actual Loops"`
	FilterRemoved float64    `json:"Rows Removed by Filter"`
	RecheckRemove float64    `json:"Rows Removed by Index Recheck"`
	Plans         []planNode `json:"Plans"`
}

// byOwner is an Index Cond that bounds a scan to one owner, or jumps past
// one (the loose scan of the held owners).
var byOwner = regexp.MustCompile(`^\(+owner [=>] `)

// tasksRowsRead walks a plan and returns the rows its scans of the
// claimed tasks found, and those scans that are not bounded to an owner:
// an Index Cond on something else, or none and more than the one row of
// the loose scan's first probe.
func tasksRowsRead(n planNode) (rows float64, unbounded []string) {
	claimedIndex := strings.HasPrefix(n.Index, "tasks_claimed") || strings.HasPrefix(n.Index, "tasks_leased")
	// A Bitmap Heap Scan's index is judged in its Bitmap Index Scan.
	if claimedIndex || n.NodeType == "Seq Scan" && n.Relation == "tasks" {
		read := (n.Rows + n.FilterRemoved + n.RecheckRemove) * n.Loops
		rows += read
		if n.IndexCond != "" && !byOwner.MatchString(n.IndexCond) || n.IndexCond == "" && read > 1 {
			unbounded = append(unbounded, n.NodeType+" "+n.Index+" "+n.IndexCond)
		}
	}
	for _, c := range n.Plans {
		r, u := tasksRowsRead(c)
		rows += r
		unbounded = append(unbounded, u...)
	}
	return rows, unbounded
}

// TestOrphansAreFoundOwnerByOwner: a claim and NextDue read the claimed
// tasks one owner at a time, each owner's by an index range bounded to
// it, so a live owner's thousands of tasks claimed ahead are not read:
// the rows their reads find stay near the number of owners and the
// orphans claimed. Owner A is alive and holds 2,000 tasks due within the
// claim's Ahead; D, silent, holds 3, which the claim takes over.
func TestOrphansAreFoundOwnerByOwner(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := t0.UnixNano()
	lease, orphan, ahead := int64(10*time.Minute), int64(30*time.Second), int64(2*time.Second)
	// A's tasks fall due within ahead and are held Lease after their ETA;
	// D's fell due ahead ago; the free ones fall due after ahead.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO sundial.tasks (name, job_id, kind, nonce, eta, invocation, attempt, owner, lease_until)
			SELECT 'a/' || i, 'p/a', 'TickLater', i, $1::bigint + i * $2::bigint / 2000, '', 0, 'A', $1::bigint + i * $2::bigint / 2000 + $3::bigint
			FROM generate_series(0, 1999) i`, []any{now, ahead, lease}},
		{`INSERT INTO sundial.tasks (name, job_id, kind, nonce, eta, invocation, attempt, owner, lease_until)
			SELECT 'd/' || i, 'p/d', 'TickLater', i, $1::bigint, '', 0, 'D', $1::bigint + $2::bigint
			FROM generate_series(0, 2) i`, []any{now - ahead, lease}},
		{`INSERT INTO sundial.tasks (name, job_id, kind, nonce, eta, invocation, attempt)
			SELECT 'f/' || i, 'p/f', 'TickLater', i, $1::bigint + i * $2::bigint, '', 0
			FROM generate_series(1, 1000) i`, []any{now + ahead, int64(time.Second)}},
	} {
		if _, err := s.pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO sundial.owners VALUES ('A', $1), ('D', $2)`, now, now-2*orphan); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE sundial.tasks"); err != nil {
		t.Fatal(err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The tables of a test are small, where PostgreSQL may rightly prefer
	// to scan them whole: with scans made dear, a plan that still does is
	// one the indexes cannot serve.
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	const owners, orphans = 2, 3
	for _, q := range []struct {
		what string
		sql  string
		args []any
	}{
		{"the claim", claimQuery, []any{[]string{}, 10, now + ahead, now, "A", now - orphan, lease}},
		{"the next-due query", nextDueQuery, []any{[]string{}, orphan}},
	} {
		plan := explain(t, tx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q.sql, q.args...)
		var root []struct {
			Plan planNode `json:"Plan"`
		}
		if err := json.Unmarshal([]byte(strings.Join(plan, "")), &root); err != nil || len(root) != 1 {
			t.Fatalf("%s: EXPLAIN's JSON: %v", q.what, err)
		}
		rows, unbounded := tasksRowsRead(root[0].Plan)
		// A few rows an owner, and the orphans taken, where reading A's
		// tasks would be 2,000.
		if limit := float64(4*owners + 2*orphans); rows > limit || len(unbounded) > 0 {
			t.Errorf("%s read %v rows of the claimed tasks (want at most %v), and these scans are not bounded to an owner: %q\n%s", q.what, rows, limit, unbounded, strings.Join(plan, "\n"))
		}
	}
}

// TestTasksOfAnOwnerWithoutARowAreFreeAtTheirETA: a task whose owner has
// no row in sundial.owners (forgotten) is due at its ETA, for NextDue and
// for a claim, whatever its lease.
func TestTasksOfAnOwnerWithoutARowAreFreeAtTheirETA(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	tick := func(nonce int64, eta time.Time) task.Task {
		return task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: nonce, ETA: eta}
	}
	if _, err := s.Update(ctx, "p/j", func(tx store.Tx) error {
		if err := tx.Enqueue(tick(1, t0)); err != nil {
			return err
		}
		return tx.Enqueue(tick(2, t0.Add(time.Minute)))
	}); err != nil {
		t.Fatal(err)
	}
	c := taskrows.Claim{Owner: "A", Now: t0, Ahead: time.Minute, Max: 10, Lease: 10 * time.Minute, OrphanAfter: time.Hour}
	if got, _, _, err := s.ClaimTasks(ctx, c); err != nil || len(got) != 2 {
		t.Fatalf("A claims both: %v, %v", got, err)
	}
	if err := s.ForgetOwner(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		at   time.Time
		name string
		next time.Time
	}{
		{t0, tick(1, t0).Name(), t0.Add(time.Minute)},
		// Then the next is the end of the lease of B's first claim.
		{t0.Add(time.Minute), tick(2, t0).Name(), t0.Add(c.Lease)},
	} {
		if got, ok, err := s.NextDue(ctx, c.OrphanAfter); err != nil || !ok || !got.Equal(step.at) {
			t.Errorf("NextDue before the claim at %v = %v, %v, %v; want the ETA of %s", step.at, got, ok, err, step.name)
		}
		got, next, ok, err := s.ClaimTasks(ctx, taskrows.Claim{Owner: "B", Now: step.at, Max: 10, Lease: c.Lease, OrphanAfter: c.OrphanAfter})
		if err != nil || len(got) != 1 || got[0].Name() != step.name {
			t.Fatalf("B's claim at %v: %v, %v; want %s", step.at, got, err, step.name)
		}
		if !ok || !next.Equal(step.next) {
			t.Errorf("B's claim at %v says the next is due at %v (%v), want %v", step.at, next, ok, step.next)
		}
	}
}

// TestAClaimSparesATaskAnotherTookMeanwhile: a claim that read the
// owners before another claim took over a dead owner's task, and reaches
// the task after that claim committed (READ COMMITTED), does not take it,
// although in its reading the new owner is dead too. The claim is stopped
// between the two by an advisory lock the test holds, taken as it reads
// the suspects.
func TestAClaimSparesATaskAnotherTookMeanwhile(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	now := t0.UnixNano()
	lease, orphan := int64(10*time.Minute), int64(30*time.Second)
	// D, dead, holds x, due; B, silent too, holds a task not yet due.
	if _, err := s.pool.Exec(ctx, `INSERT INTO sundial.tasks (name, job_id, kind, nonce, eta, invocation, attempt, owner, lease_until)
		VALUES ('x', 'p/x', 'TickLater', 1, $1::bigint, '', 0, 'D', $1::bigint + $2::bigint),
			('b', 'p/b', 'TickLater', 1, $1::bigint + $2::bigint, '', 0, 'B', $1::bigint + 2 * $2::bigint)`, now-orphan, lease); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO sundial.owners VALUES ('D', $1), ('B', $1)`, now-2*orphan); err != nil {
		t.Fatal(err)
	}
	const gateKey = 3838
	gate, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Release()
	if _, err := gate.Exec(ctx, "SELECT pg_advisory_lock($1)", gateKey); err != nil {
		t.Fatal(err)
	}
	// Should the test stop early, C's claim must not wait for ever.
	defer gate.Exec(context.Background(), "SELECT pg_advisory_unlock_all()")
	gated := strings.Replace(claimQuery, "SELECT h.owner, o.heartbeat FROM held h",
		fmt.Sprintf("SELECT h.owner, o.heartbeat, pg_advisory_xact_lock_shared(%d) FROM held h", gateKey), 1)
	if gated == claimQuery {
		t.Fatal("claimQuery no longer reads the suspects as this test expects")
	}
	claimed := func(q, owner string) []string {
		rows, err := s.pool.Query(ctx, q, []string{}, 10, now, now, owner, now-orphan, lease)
		if err != nil {
			t.Error(err)
			return nil
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (taskrows.Claimed, error) { return scanTask(r) })
		if err != nil {
			t.Error(err)
		}
		names := []string{}
		for _, c := range got {
			names = append(names, c.JobID)
		}
		return names
	}
	byC := make(chan []string, 1)
	go func() { byC <- claimed(gated, "C") }()
	for waiting := 0; waiting == 0; {
		select {
		case got := <-byC:
			t.Fatalf("C's claim ended (with %q) before the gate stopped it", got)
		default:
		}
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, gateKey).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	if got := claimed(claimQuery, "B"); !slices.Equal(got, []string{"p/x"}) {
		t.Fatalf("B, back, claimed %q, want p/x's task", got)
	}
	if _, err := gate.Exec(ctx, "SELECT pg_advisory_unlock($1)", gateKey); err != nil {
		t.Fatal(err)
	}
	if got := <-byC; len(got) != 0 {
		t.Errorf("C took %q, which B took over after C had read the owners", got)
	}
}

// TestAWriteMayHaveCommittedWhenItsAnswerIsLost: only an answer lost on its
// way (a cut connection, a server that crashed after committing) leaves
// a write's outcome unknown; a request never sent, a server that could
// not be reached and an error the server answered (which rolled the
// transaction back) do not.
func TestAWriteMayHaveCommittedWhenItsAnswerIsLost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		what string
		err  error
		want bool
	}{
		{"an answer lost", fmt.Errorf("postgres: claim: %w", io.ErrUnexpectedEOF), true},
		{"a request cancelled in flight", context.Canceled, true},
		{"the server's error", fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "40001"}), false},
		{"no connection", &pgconn.ConnectError{}, false},
		{"a COMMIT answered ROLLBACK", fmt.Errorf("postgres: commit: the server answered ROLLBACK (%w)", errRolledBack), false},
	} {
		if got := mayHaveCommitted(tc.err); got != tc.want {
			t.Errorf("%s (%v): may have committed %v, want %v", tc.what, tc.err, got, tc.want)
		}
	}
}
