package postgres

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// A batch's functions run side by side, one goroutine each, and their
// reads share round trips: when every function still running waits for
// a read, the reads asked go to the server in one batch. A launch's tick
// and outcome each read an invocation; asked one after the other, a
// hundred Updates' reads were a hundred round trips on the batch's one
// connection while every other Update of the batch waited.

// reads serves the reads of one batch's functions over its transaction.
type reads struct {
	ctx   context.Context
	conn  sender         // in the batch's transaction
	trips *atomic.Uint64 // the store's count

	mu      sync.Mutex
	running int     // functions neither done nor waiting for a read
	asked   []*read // reads waiting for the next round trip
	wake    chan struct{}
}

// A read is one statement and what to do with its rows.
type read struct {
	sql     string
	args    []any
	collect func(pgx.Rows) error
	done    chan error
}

// sender is a connection, or a transaction on one.
type sender interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}

func newReads(ctx context.Context, conn sender, functions int, trips *atomic.Uint64) *reads {
	return &reads{ctx: ctx, conn: conn, trips: trips, running: functions, wake: make(chan struct{}, 1)}
}

// query runs sql with args and hands its rows to collect, once every
// function of the batch waits. It returns collect's error, or the
// server's.
func (r *reads) query(sql string, args []any, collect func(pgx.Rows) error) error {
	rd := &read{sql: sql, args: args, collect: collect, done: make(chan error, 1)}
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

// send sends reads in one round trip and answers each. After a statement
// the server failed, the transaction is aborted and the rest fail too.
func (r *reads) send(asked []*read) {
	var b pgx.Batch
	for _, rd := range asked {
		b.Queue(rd.sql, rd.args...)
	}
	r.trips.Add(1)
	br := r.conn.SendBatch(r.ctx, &b)
	for _, rd := range asked {
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
