package postgres

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/store"
)

// A batch's functions run side by side, one goroutine each, and their
// reads share round trips: when every function still running waits for
// a read, the reads asked go to the server in one batch. A launch's tick
// and outcome each read an invocation; asked one after the other, a
// hundred Updates' reads were a hundred round trips on the batch's one
// connection while every other Update of the batch waited. The
// invocations asked together are read by one statement: a statement each
// was 7 % of PostgreSQL's statement time at 100,000 jobs.

// reads serves the reads of one batch's functions over its transaction.
type reads struct {
	ctx        context.Context
	conn       sender         // in the batch's transaction
	trips      *atomic.Uint64 // the store's counts
	statements *atomic.Uint64

	mu      sync.Mutex
	running int     // functions neither done nor waiting for a read
	asked   []*read // reads waiting for the next round trip
	wake    chan struct{}
}

// A read is one statement and what to do with its rows, or one
// invocation by its key.
type read struct {
	sql     string
	args    []any
	collect func(pgx.Rows) error
	inv     *invKey // instead of sql: this invocation, into found
	found   *store.InvocationRecord
	done    chan error
}

type invKey struct{ jobID, id string }

// readInvocations reads the invocations of two arrays of keys ($1 the
// jobs', $2 the ids), each by the primary key (TestInvocationsAreReadByKey).
const readInvocations = "SELECT " + invColumns + ` FROM unnest($1::text[], $2::text[]) AS k(k_job, k_id)
	JOIN sundial.invocations ON job_id = k_job AND id = k_id`

// sender is a connection, or a transaction on one.
type sender interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}

func newReads(ctx context.Context, conn sender, functions int, trips, statements *atomic.Uint64) *reads {
	return &reads{ctx: ctx, conn: conn, trips: trips, statements: statements, running: functions, wake: make(chan struct{}, 1)}
}

// query runs sql with args and hands its rows to collect, once every
// function of the batch waits. It returns collect's error, or the
// server's.
func (r *reads) query(sql string, args []any, collect func(pgx.Rows) error) error {
	return r.ask(&read{sql: sql, args: args, collect: collect, done: make(chan error, 1)})
}

// invocation reads one of jobID's invocations, nil if there is none, once
// every function of the batch waits, with the others asked meanwhile.
func (r *reads) invocation(jobID, id string) (*store.InvocationRecord, error) {
	rd := &read{inv: &invKey{jobID, id}, done: make(chan error, 1)}
	err := r.ask(rd)
	return rd.found, err
}

func (r *reads) ask(rd *read) error {
	r.mu.Lock()
	r.asked = append(r.asked, rd)
	r.running--
	r.poke()
	r.mu.Unlock()
	return <-rd.done
}

// finished tells serve that one function returned.
func (r *reads) finished() {
	r.mu.Lock()
	r.running--
	r.poke()
	r.mu.Unlock()
}

// poke wakes serve if no function runs. r.mu is held.
func (r *reads) poke() {
	if r.running == 0 {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// serve answers the functions' reads until every function returned.
func (r *reads) serve() {
	for range r.wake {
		r.mu.Lock()
		asked := r.asked
		r.asked = nil
		r.running += len(asked)
		r.mu.Unlock()
		if len(asked) == 0 {
			return
		}
		r.send(asked)
	}
}

// send sends reads in one round trip and answers each: the invocations
// first, by one statement, then the other statements. After a statement
// the server failed, the transaction is aborted and the rest fail too.
func (r *reads) send(asked []*read) {
	var b pgx.Batch
	var invs, others []*read
	var jobIDs, ids []string
	for _, rd := range asked {
		if rd.inv == nil {
			others = append(others, rd)
			continue
		}
		invs = append(invs, rd)
		jobIDs, ids = append(jobIDs, rd.inv.jobID), append(ids, rd.inv.id)
	}
	if len(invs) > 0 {
		b.Queue(readInvocations, jobIDs, ids)
	}
	for _, rd := range others {
		b.Queue(rd.sql, rd.args...)
	}
	r.trips.Add(1)
	r.statements.Add(uint64(b.Len()))
	br := r.conn.SendBatch(r.ctx, &b)
	if len(invs) > 0 {
		err := answerInvocations(br, invs)
		for _, rd := range invs {
			rd.done <- err
		}
	}
	for _, rd := range others {
		rows, err := br.Query()
		if err == nil {
			err = rd.collect(rows)
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		rd.done <- err
	}
	br.Close()
}

// answerInvocations reads the invocations' statement into the reads that
// asked for them. A batch holds one Update of a job, and an Update one
// read at a time, so no two of them ask for one key.
func answerInvocations(br pgx.BatchResults, invs []*read) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	found := make(map[invKey]*store.InvocationRecord, len(invs))
	for rows.Next() {
		inv, err := scanInvocation(rows)
		if err != nil {
			rows.Close()
			return err
		}
		found[invKey{inv.JobID, inv.ID}] = inv
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, rd := range invs {
		rd.found = found[*rd.inv]
	}
	return nil
}
