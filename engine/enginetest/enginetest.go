// Package enginetest drives the engine for tests on a fake clock over the
// embedded backend: the SQLite store, the local dispatcher and the
// watchdog, stepped from task to task instead of waiting in real time.
package enginetest

import (
	"context"
	"time"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// LateQueue lets the dispatcher be made after the engine that posts to it:
// set Queue before the first post.
type LateQueue struct{ Queue task.Queue }

// Post hands the tasks to Queue.
func (l *LateQueue) Post(ctx context.Context, ts []task.Task) error {
	return l.Queue.Post(ctx, ts)
}

// RunUntil runs every task due up to until, in time order, moving c to each
// task's time, with a watchdog pass at every minute; it leaves c at until.
func RunUntil(ctx context.Context, c *fakeclock.Clock, st *sqlite.Store, d *local.Dispatcher, wd *watchdog.Watchdog, until time.Time) error {
	nextPass := c.Now().Truncate(time.Minute).Add(time.Minute)
	for {
		next := nextPass
		if due, ok, err := st.NextDue(ctx, 10*time.Second); err != nil {
			return err
		} else if ok && due.Before(next) {
			next = due
		}
		if next.After(until) {
			c.Set(until)
			return nil
		}
		if next.After(c.Now()) {
			c.Set(next)
		}
		if _, _, _, err := d.RunDue(ctx, c.Now()); err != nil {
			return err
		}
		if !c.Now().Before(nextPass) {
			if _, err := wd.Pass(ctx); err != nil {
				return err
			}
			nextPass = nextPass.Add(time.Minute)
		}
	}
}
