// Package store is Sundial's persistence interface. Backends: store/sqlite
// (the embedded default) and store/datastore; store/storetest is the
// conformance suite both pass.
//
// The interface is shaped by Cloud Datastore. A job is an entity group: the
// Job, its Invocations and the Definitions they run under. A transaction
// touches exactly one group and a few hundred entities at most, and the
// tasks it enqueues commit with it (or, for a backend whose queue cannot
// join the transaction, are returned to be posted right after it). Reads across jobs happen outside transactions and
// may be slightly stale. There are no joins.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/task"
)

// ErrNotFound is returned for a job or invocation that does not exist.
var ErrNotFound = errors.New("not found")

// ErrInvalidCursor is returned by a listing given a page cursor it did not
// make: the caller's input is at fault, not the store.
var ErrInvalidCursor = errors.New("invalid page cursor")

// ErrConflict is returned by Update when a transaction kept conflicting with
// concurrent ones and the backend gave up retrying it.
var ErrConflict = errors.New("transaction conflict")

// JobRecord is the root entity of a job's group. The store reads and writes the
// fields; the blobs are the engine's and opaque here.
type JobRecord struct {
	ID      string // "<project>/<job>"
	Project string
	State   string // the state machine's state, for listings

	// WatchdogTimerTs is when the task the job waits for must have run; the
	// zero time means the job waits for nothing (PAUSED, DISABLED). Indexed.
	WatchdogTimerTs time.Time

	Definition   []byte // the job's definition, as the engine encodes it
	EncodedState []byte // the state machine's state, as the engine encodes it

	// Memo is the state in the form its writer reads fastest, attached
	// at PutJob beside the EncodedState it encodes to; opaque here, and
	// never stored. A store that answers transactions from memory may
	// keep it with the record a PutJob committed and hand it back from a
	// later Tx.Job in place of EncodedState, which it then leaves nil
	// (the SQLite store's cache holds each job's state once so). A record
	// read from the file has EncodedState and no Memo, and one whose put
	// did not commit is never handed back. A writer that attaches a Memo
	// must read the state from it whenever it comes back, and must not
	// modify it once put; a record with a Memo and no EncodedState is
	// refused by PutJob (CheckPut), as its state would be lost.
	Memo any
}

// CheckPut is what every store checks of a JobRecord put: a record handed
// back with its Memo in place of its EncodedState cannot be put back as
// it is.
func CheckPut(j *JobRecord) error {
	if j.Memo != nil && j.EncodedState == nil {
		return fmt.Errorf("job %s put with a Memo and no EncodedState: its state would be lost", j.ID)
	}
	return nil
}

// InvocationRecord is a child of its job: one occurrence and the attempts to run
// it, or a record of occurrences that were skipped and why.
type InvocationRecord struct {
	JobID      string
	ID         string    // derived from the occurrence; unique in the job
	Occurrence time.Time // the scheduled time (for a manual trigger: when it was asked)
	Status     string    // QUEUED, LAUNCHING, RUNNING, RETRYING, SUCCEEDED, FAILED, ABORTED, SKIPPED
	Attempt    int
	Manual     bool
	// TriggeredBy is the identity that asked for a manual occurrence, as
	// access.Identity writes it; "" for a scheduled one, and for records
	// of releases that did not keep it.
	TriggeredBy string
	Created     time.Time
	Started     time.Time // the current attempt's launch; zero before it
	Ended       time.Time
	Message     string // why it ended as it did, or why it was skipped
	Reason      string // SKIPPED: the reason, one word (overrun, missed, ...)

	// A SKIPPED record may stand for several occurrences of one reason, the
	// first at Occurrence and the last at Last.
	Count int
	Last  time.Time

	// Backfill marks a scheduled occurrence a backfill ran, long after its
	// time; false for every other, and for records of earlier releases.
	Backfill bool

	// DefinitionHash names the definition it runs under (the job's at
	// creation), stored once in the job's group (Tx.PutDefinition).
	DefinitionHash string
	// Definition holds the definition's bytes in a record an older release
	// wrote, before definitions were stored apart; those keep reading so.
	// New records leave it nil.
	Definition []byte
	Log        []byte // bounded debug log, head and tail kept
}

// ProjectRecord is a project's own record, apart from its jobs: what the
// revision it runs says about the project as a whole (who may see and
// steer it). Every instance reads it from here, whichever one applied the
// revision. The blob is the engine's and opaque here.
type ProjectRecord struct {
	ID      string
	Encoded []byte
}

// DefinitionHash is the name a job's encoded definition is stored under:
// its SHA-256, in hex. Equal bytes get one name, so a job's invocations
// share one stored copy of each definition it had.
func DefinitionHash(encoded []byte) string {
	sum := SumDefinition(encoded)
	return hex.EncodeToString(sum[:])
}

// DefinitionSum is what a DefinitionHash spells in hex: 32 bytes where the
// hash takes 64, for the caches that keep one per job.
type DefinitionSum [sha256.Size]byte

// SumDefinition is DefinitionHash before its hex.
func SumDefinition(encoded []byte) DefinitionSum { return sha256.Sum256(encoded) }

// ParseDefinitionHash reads a DefinitionHash back; false for a string that
// is not one.
func ParseDefinitionHash(hash string) (DefinitionSum, bool) {
	var sum DefinitionSum
	if hex.DecodedLen(len(hash)) != len(sum) {
		return sum, false
	}
	_, err := hex.Decode(sum[:], []byte(hash))
	return sum, err == nil
}

// Names reports whether hash is this sum's DefinitionHash. It allocates
// nothing: every new invocation asks.
func (s DefinitionSum) Names(hash string) bool {
	var x [2 * sha256.Size]byte
	hex.Encode(x[:], s[:])
	return string(x[:]) == hash
}

// Finished reports whether an invocation with this status has ended for
// good: its record is never written again except to fold more occurrences
// into a SKIPPED one, so retention may delete it.
func Finished(status string) bool {
	switch status {
	case "SUCCEEDED", "FAILED", "ABORTED", "SKIPPED":
		return true
	}
	return false
}

// Failure reports whether a finished status is a failure, which retention
// keeps apart from (and usually longer than) successes and skip records.
func Failure(status string) bool { return status == "FAILED" || status == "ABORTED" }

// The status classes a listing of a project's invocations filters by
// (InvocationFilter.Class): what a person asks for ("what failed?"),
// each a few statuses.
const (
	ClassRunning   = "running"   // not ended: QUEUED, LAUNCHING, RUNNING, RETRYING
	ClassSucceeded = "succeeded" // SUCCEEDED
	ClassFailed    = "failed"    // FAILED, ABORTED
	ClassSkipped   = "skipped"   // SKIPPED
)

// StatusClasses are the status classes, in the order a listing offers them.
var StatusClasses = []string{ClassFailed, ClassRunning, ClassSucceeded, ClassSkipped}

// StatusClass is the class of an invocation's status: every status
// Finished does not know is one that has not ended.
func StatusClass(status string) string {
	switch status {
	case "SUCCEEDED":
		return ClassSucceeded
	case "FAILED", "ABORTED":
		return ClassFailed
	case "SKIPPED":
		return ClassSkipped
	}
	return ClassRunning
}

// InvocationFilter says which of a project's invocation records
// ProjectInvocations lists. The zero value lists every one.
type InvocationFilter struct {
	// JobID keeps one job's records; it must be a job of the project.
	// "" keeps every job's.
	JobID string
	// Class keeps the records whose status is of this class
	// (StatusClass); "" keeps every status.
	Class string
	// Since keeps the records whose occurrence is at or after it; the
	// zero time keeps every one.
	Since time.Time
}

// Expiry says which of one class of a job's finished invocation records
// retention deletes: those whose occurrence is before Before, and those
// older than the class's newest Keep. Records that share an occurrence with
// the Keep-th newest stay with it.
type Expiry struct {
	// Failures picks the class: FAILED and ABORTED records, or else
	// SUCCEEDED and SKIPPED ones.
	Failures bool
	Before   time.Time // the zero time: no bound on age
	Keep     int       // 0: no bound on count
}

// Page asks for one page of a listing.
type Page struct {
	Cursor string // from the previous page's Next; "" for the first
	Limit  int    // at most this many; see Size
}

// Page sizes every backend gives: a Limit of 0 asks for DefaultLimit, and
// more than MaxLimit is capped.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// MaxRecent bounds Recent's n, and MaxRecentJobs how many jobs one call
// names: a page of a listing, not the whole store.
const (
	MaxRecent     = 100
	MaxRecentJobs = 1000
)

// Size is how many items a backend returns at most for p.
func (p Page) Size() int {
	switch {
	case p.Limit <= 0:
		return DefaultLimit
	case p.Limit > MaxLimit:
		return MaxLimit
	}
	return p.Limit
}

// Tx is a transaction on one job's entity group.
type Tx interface {
	// Job returns the job, or ErrNotFound. Its EncodedState may be nil
	// where the Memo of the record put is handed back (JobRecord.Memo).
	Job() (*JobRecord, error)
	PutJob(*JobRecord) error
	// Invocation returns one of the job's invocations, or ErrNotFound.
	Invocation(id string) (*InvocationRecord, error)
	// HasInvocations reports, for each id in order, whether Invocation
	// would find one with it, in one read of the store for up to
	// MaxHasInvocations ids: a backfill walks a range of occurrences that
	// may all have records.
	HasInvocations(ids []string) ([]bool, error)
	PutInvocation(*InvocationRecord) error
	// PutDefinition stores one of the job's definitions, if it is not
	// stored yet, and returns its DefinitionHash for the invocations that
	// run under it. Definitions are never replaced nor deleted: retention
	// deletes invocation records only, so every hash a record names stays
	// readable.
	PutDefinition(encoded []byte) (hash string, err error)
	// DeleteInvocation deletes one of the job's finished invocations (see
	// Finished) with its log. An unfinished or absent one is left as it
	// is: retention must never end an invocation that is still going.
	DeleteInvocation(id string) error
	// Enqueue schedules a task; it commits with the transaction.
	Enqueue(task.Task) error
}

// MaxHasInvocations is how many ids Tx.HasInvocations answers in one read
// of the store (Datastore looks up at most 1,000 keys at once); it takes
// more, in more reads.
const MaxHasInvocations = 1000

type deferrableKey struct{}

// Deferrable marks the writes made with ctx as ones no target call waits
// for, such as the record of an attempt's outcome: a store with a single
// writer lets the writes a launch waits for go first. It changes only the
// order in which writes to different jobs commit.
func Deferrable(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferrableKey{}, true)
}

// IsDeferrable reports whether ctx was marked by Deferrable.
func IsDeferrable(ctx context.Context) bool {
	v, _ := ctx.Value(deferrableKey{}).(bool)
	return v
}

type newJobKey struct{}

// NewJob marks the Updates made with ctx as ones on jobs the caller has
// just found absent, such as the jobs a config adds, listed with the
// project's jobs: a store may run their functions on that absence without
// reading the job again. It is a hint, never trusted: the store checks the
// absence when it commits, and a job that exists after all (defined
// meanwhile) has the function run again on the job as it is.
func NewJob(ctx context.Context) context.Context {
	return context.WithValue(ctx, newJobKey{}, true)
}

// IsNewJob reports whether ctx was marked by NewJob.
func IsNewJob(ctx context.Context) bool {
	v, _ := ctx.Value(newJobKey{}).(bool)
	return v
}

// Submitter is a Store whose Updates can be started without waiting for
// their commits, so that one caller keeps many transactions in flight: a
// store with a single writer fills its commits with them, and one whose
// transactions are round trips has them travel side by side. The engine
// defines a large config's jobs so, with few goroutines of its own.
type Submitter interface {
	// Submit starts Update(ctx, jobID, fn) and returns without waiting
	// for its commit; wait waits for it and returns what Update would
	// have. fn may run on another goroutine, and more than once, as
	// within Update; a panic in it is raised in the caller, of Submit or
	// of wait. Every wait must be called, once.
	Submit(ctx context.Context, jobID string, fn func(Tx) error) (wait func() ([]task.Task, error))
}

// Store is a persistence backend. It is safe for concurrent use.
type Store interface {
	// Update runs fn in a transaction on the entity group of jobID and
	// commits it if fn returns nil. fn may run more than once (on a
	// conflict), so it must not have effects outside tx. It returns the
	// tasks the committed transaction enqueued, for task.Queue.Post.
	// If fn returns an error nothing is written and Update returns it.
	Update(ctx context.Context, jobID string, fn func(Tx) error) ([]task.Task, error)

	// Job reads a job outside any transaction.
	Job(ctx context.Context, id string) (*JobRecord, error)
	// Jobs lists a project's jobs (all jobs for project ""), by id.
	Jobs(ctx context.Context, project string, p Page) (jobs []*JobRecord, next string, err error)
	// Invocation reads one invocation outside any transaction.
	Invocation(ctx context.Context, jobID, id string) (*InvocationRecord, error)
	// Definition reads a definition of the job stored by Tx.PutDefinition,
	// or returns ErrNotFound.
	Definition(ctx context.Context, jobID, hash string) ([]byte, error)
	// Invocations lists a job's invocations, newest occurrence first.
	Invocations(ctx context.Context, jobID string, p Page) (invs []*InvocationRecord, next string, err error)
	// Recent returns the newest n invocations of each of the named jobs
	// (n at most MaxRecent), newest occurrence first as Invocations
	// orders them, without their Log or legacy Definition bytes: the
	// history strips of a page of jobs, read at once rather than with a
	// listing per job. A job with no invocations, or none at all, is
	// absent from the map.
	Recent(ctx context.Context, jobIDs []string, n int) (map[string][]*InvocationRecord, error)
	// ProjectInvocations lists the invocation records of a project's
	// jobs that f picks, newest occurrence first (ties in the backend's
	// order), without their Log or legacy Definition bytes: a page of
	// what ran across the project. Its cost follows the page, not the
	// project's history: backends serve it from indexes by project (and
	// status class) and occurrence. With f.JobID it reads
	// that job's records, newest first, and its cost follows at most
	// that job's records since f.Since. A cursor pages only the filter
	// that made it.
	ProjectInvocations(ctx context.Context, project string, f InvocationFilter, p Page) (invs []*InvocationRecord, next string, err error)
	// Overdue lists up to limit jobs whose WatchdogTimerTs is set and at or
	// before now, the most overdue first. Its cost follows the number of
	// such jobs, not the number of jobs. The answer may be stale.
	Overdue(ctx context.Context, now time.Time, limit int) ([]string, error)

	// Expired lists up to limit ids of the job's finished invocations
	// that r lets go, in the backend's order: store/sqlite lists the
	// oldest first, store/datastore the newest, so a limit may leave out
	// either end. Its cost follows the ids it returns plus r.Keep index
	// entries, not the job's whole history.
	Expired(ctx context.Context, jobID string, r Expiry, limit int) ([]string, error)

	// Project reads a project's record, or returns ErrNotFound.
	Project(ctx context.Context, id string) (*ProjectRecord, error)
	// Projects lists every project's record, by id. Projects are few (one
	// per config file), so there is no paging.
	Projects(ctx context.Context) ([]*ProjectRecord, error)
	// PutProject writes a project's record whole, replacing any it had.
	// It is its own entity group, written outside any job's transaction.
	PutProject(ctx context.Context, p *ProjectRecord) error
	// UpdateProject reads a project's record (nil if it has none), has fn
	// say what it becomes, and writes that, in one transaction: a writer
	// of the same record in between makes it read again (Datastore) or
	// waits (SQLite), so no write of another instance's is lost. fn
	// returning nil writes nothing; an error from fn is returned as is.
	UpdateProject(ctx context.Context, id string, fn func(*ProjectRecord) (*ProjectRecord, error)) error

	Close() error
}
