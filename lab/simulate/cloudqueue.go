package simulate

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/cloudtasks"
)

// cloudQueue stands for Cloud Tasks on the simulated clock, as the cloud
// shape uses it (task/cloudtasks):
//   - A task exists once Post created it, after its transaction
//     committed; a create that never arrives loses it.
//   - Tasks are named: creating a name that exists, or that was delivered
//     or purged within the last hour, is refused as a duplicate, which the
//     poster takes for success.
//   - A failed delivery is retried with queue.yaml's backoff; while the
//     service is down every dispatch fails and backs off, so tasks that
//     fell due meanwhile come late.
//   - It dispatches on Google's clock, the true simulated time, not on the
//     instance's.
//
// A delivery that lands twice is the simulator's Duplicate fault, as on
// the embedded shape.
type cloudQueue struct {
	now     func() time.Time
	handle  task.Handler
	workers int
	retry   cloudtasks.Retry

	mu    sync.Mutex
	tasks map[string]*cloudTask
	used  map[string]time.Time // name → until when a create of it is refused
}

type cloudTask struct {
	t        task.Task
	due      time.Time
	failures int
	inflight bool
}

// dispatchLatency is the least time between a task's create and its
// dispatch: Cloud Tasks takes a moment, and the simulator's steps make it
// a step. A task a handler creates due at once is dispatched in a later
// step, so a handler that keeps re-creating its own task (as the engine
// does with a tick that arrives early by the instance's clock) makes
// progress on the simulated clock instead of spinning in one instant.
const dispatchLatency = time.Millisecond

// dedup is how long Cloud Tasks refuses the name of a task that was
// delivered or deleted.
const dedup = time.Hour

// queueRetry is queue.yaml's retry_parameters.
var queueRetry = cloudtasks.Retry{MinBackoff: time.Second, MaxBackoff: 300 * time.Second, MaxDoublings: 5}

func newCloudQueue(now func() time.Time, handle task.Handler) *cloudQueue {
	return &cloudQueue{now: now, handle: handle, workers: 16, retry: queueRetry, tasks: map[string]*cloudTask{}, used: map[string]time.Time{}}
}

// Post creates the tasks. It never fails: a duplicate is success.
func (q *cloudQueue) Post(_ context.Context, tasks []task.Task) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for _, t := range tasks {
		name := t.Name()
		if until, ok := q.used[name]; ok && now.Before(until) {
			continue
		}
		delete(q.used, name)
		if _, ok := q.tasks[name]; ok {
			continue
		}
		q.tasks[name] = &cloudTask{t: t, due: later(t.ETA, now.Add(dispatchLatency))}
	}
	return nil
}

// runDue delivers the due tasks, up to workers at a time, until none is
// due; those the handlers create come due after dispatchLatency.
func (q *cloudQueue) runDue(ctx context.Context) (time.Time, bool, error) {
	for {
		batch := q.due()
		if len(batch) == 0 {
			break
		}
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		for i, c := range batch {
			wg.Go(func() { errs[i] = q.handle(ctx, c.t) })
		}
		wg.Wait()
		q.mu.Lock()
		now := q.now()
		for i, c := range batch {
			c.inflight = false
			if errs[i] != nil {
				c.failures++
				c.due = now.Add(q.retry.Backoff(c.failures))
				continue
			}
			name := c.t.Name()
			// A purge during the delivery already deleted it.
			if q.tasks[name] == c {
				delete(q.tasks, name)
				q.used[name] = now.Add(dedup)
			}
		}
		q.mu.Unlock()
	}
	next, ok := q.next()
	return next, ok, nil
}

// due returns up to workers due tasks, earliest first, and marks them in
// flight.
func (q *cloudQueue) due() []*cloudTask {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	var due []*cloudTask
	for _, c := range q.tasks {
		if !c.inflight && !c.due.After(now) {
			due = append(due, c)
		}
	}
	slices.SortFunc(due, func(a, b *cloudTask) int {
		if c := a.due.Compare(b.due); c != 0 {
			return c
		}
		return strings.Compare(a.t.Name(), b.t.Name())
	})
	if len(due) > q.workers {
		due = due[:q.workers]
	}
	for _, c := range due {
		c.inflight = true
	}
	return due
}

func (q *cloudQueue) next() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var next time.Time
	ok := false
	for _, c := range q.tasks {
		if !ok || c.due.Before(next) {
			next, ok = c.due, true
		}
	}
	return next, ok
}

// purge deletes every task, as PurgeQueue does.
func (q *cloudQueue) purge() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for name := range q.tasks {
		q.used[name] = now.Add(dedup)
	}
	clear(q.tasks)
}

// down fails every dispatch that falls in [from, to), as a service that
// answers nothing would, each failure backing the task off.
func (q *cloudQueue) down(from, to time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range q.tasks {
		at := later(c.due, from)
		for ; at.Before(to); at = at.Add(q.retry.Backoff(c.failures)) {
			c.failures++
		}
		c.due = at
	}
}
