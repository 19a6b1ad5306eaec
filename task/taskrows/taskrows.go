// Package taskrows is what task/local's dispatcher needs of the store its task
// rows live in, and the words it uses: a claim, a claimed task, a retry,
// an adoption. A store whose transactions can write rows beside its jobs
// implements Rows (store/sqlite, store/postgres), and the one dispatcher
// runs over either.
package taskrows

import (
	"context"
	"errors"
	"time"

	"github.com/sundial-cron/sundial/task"
)

// Rows is what a Dispatcher needs of the store its task rows live in: the
// rows commit with the store transactions that enqueue them, and several
// dispatchers (one per process) share them through claims. A claim is held
// by an owner until its lease ends or the owner is taken for dead (no
// heartbeat for OrphanAfter, or forgotten), whichever comes first; then
// the task is free for any owner to claim. Leases and heartbeats are wall
// times, which a step of the clock moves under them: a claim of an owner
// the dispatcher knows alive otherwise (Claim.Alive, its lock file) holds
// whatever they say, until the owner is forgotten. Every method takes its
// times as arguments: an implementation reads no clock.
//
// rowstest is its conformance suite; *sqlite.Store and *postgres.Store
// implement it.
type Rows interface {
	// ClaimTasks claims for c.Owner, in one transaction, up to c.Max free
	// tasks whose ETA is at or before c.Now+c.Ahead, earliest first, each
	// held until c.Lease after c.Now or its ETA, whichever is later. A
	// task is free if no one holds it, or if its owner is not in c.Alive
	// and its lease has ended or it has had no heartbeat for
	// c.OrphanAfter, all judged at c.Now. A claim that takes anything also
	// records c.Owner's heartbeat at c.Now. Before claiming it settles
	// c.Owner's earlier claims as AckTasks would (c.Done, c.Retry) and
	// hands back c.Release as never delivered (free at once, failures
	// unchanged). When it claims fewer than c.Max it also returns when the
	// next task can be claimed, as NextDue would right after it with
	// c.Alive (ok false: no task left); a full claim's next and ok say
	// nothing. Lease and OrphanAfter must be positive, Ahead not negative.
	ClaimTasks(ctx context.Context, c Claim) (claimed []Claimed, next time.Time, ok bool, err error)
	// AckTasks deletes the tasks done and hands back the tasks of retry,
	// free again at their new ETA with one more failure counted, in one
	// transaction. A retry of a task owner no longer holds changes
	// nothing: another owner took it over.
	AckTasks(ctx context.Context, owner string, done []string, retry []Retry) error
	// Heartbeat records that owner is alive at now (a later heartbeat is
	// never overwritten by an older one) and forgets the owners silent for
	// orphanAfter, which must be positive.
	Heartbeat(ctx context.Context, owner string, now time.Time, orphanAfter time.Duration) error
	// NextDue returns the earliest time at which ClaimTasks with this
	// orphanAfter and these owners Alive could claim some task, assuming
	// every other owner stops heartbeating now; it may be in the past. ok
	// is false when there is no such task.
	NextDue(ctx context.Context, orphanAfter time.Duration, alive ...string) (next time.Time, ok bool, err error)
	// ForgetOwner deletes owner's heartbeat: its claims are free at once.
	// For an owner known to be dead.
	ForgetOwner(ctx context.Context, owner string) error
	// Adopt makes the store write the tasks its transactions enqueue
	// already due (ETA at or before a.Now()) as claimed by a.Owner for
	// a.Lease, and hand them to a.Adopted once the transaction committed;
	// a task that was already queued is not adopted again. nil stops
	// adopting. The adopter acknowledges adopted tasks as claimed ones and
	// hands back (Claim.Release) those it will not run.
	Adopt(a *Adoption)
}

// Claim asks ClaimTasks for due tasks.
type Claim struct {
	Owner string    // the claiming dispatcher, unique per process
	Now   time.Time // due means ETA at or before Now
	Max   int       // at most this many (the free workers)
	// Ahead also claims the tasks due within Ahead after Now, for the
	// dispatcher to start at their ETA: the claim's commit is then behind
	// them when they fall due. Each is held until its ETA plus Lease.
	// Others' claims are still judged at Now.
	Ahead time.Duration
	// Lease is how long the claim holds while Owner is alive.
	Lease time.Duration
	// OrphanAfter: a claim whose owner's last heartbeat is this old is
	// free, whatever its lease says.
	OrphanAfter time.Duration
	// Alive names the owners known to be alive by other means than the
	// wall clock (task/local's lock files): their claims hold, whatever
	// their leases and heartbeats say. Both are wall times, and a step of
	// the clock (NTP, a VM resumed) makes a live owner's claims look
	// expired or orphaned, and its tasks under way free to run again.
	Alive []string
	// Done and Retry acknowledge Owner's earlier claims, as AckTasks
	// would, in the claim's transaction: a dispatcher stepping round by
	// round then commits once a round instead of twice.
	Done  []string
	Retry []Retry
	// Release hands back Owner's claims of these tasks as they are, as
	// never delivered: free at once, their failures unchanged.
	Release []string
	// Recover names the Nows of Owner's earlier claims, and the clocks of
	// its adoptions, whose commits ended in ErrOutcomeUnknown: the tasks
	// they wrote claimed by Owner, if they committed, are claimed again
	// by this claim as if free, for Owner to run. Without it they would
	// be held, unknown to Owner, until their leases end. (A task is
	// recognized by its lease, which such a write set from that clock: a
	// task another claim took ahead of an ETA after that reading may come
	// back too, as one a claim takes again after its lease ended does.)
	Recover []time.Time
}

// ErrOutcomeUnknown is in the chain of a write's error when the write may
// have committed: its answer was lost on the way (a connection cut, a
// database that crashed after committing).
var ErrOutcomeUnknown = errors.New("the write may have committed: its answer was lost")

// Adoption lets a dispatcher take the tasks Updates enqueue already due:
// each is written claimed by Owner, in the Update's own transaction, and
// handed to Adopted once that committed, so it runs without a claim of its
// own (a commit, and a turn of the dispatcher's loop, between a tick and
// the launch it enqueues). The dispatcher still acknowledges it as a
// claimed task, and hands it back (Claim.Release) if it will not run it.
type Adoption struct {
	Owner string
	Lease time.Duration
	Now   func() time.Time
	// Adopted runs on the committer right after the commit; it must not
	// block or call the Store.
	Adopted func([]task.Task)
	// Lost runs on the committer when a commit that wrote tasks claimed
	// by Owner, on the adoption's clock reading at, ended in
	// ErrOutcomeUnknown: Claim.Recover with at finds them. It must not
	// block or call the Store.
	Lost func(at time.Time)
}

// Claimed is a task a dispatcher now holds.
type Claimed struct {
	task.Task
	Failures int // failed deliveries so far, for backoff
}

// Retry hands a claimed task back, to be delivered again at ETA.
type Retry struct {
	Name string
	ETA  time.Time
}
