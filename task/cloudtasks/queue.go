// Package cloudtasks is the cloud task queue: each task becomes a Cloud
// Tasks task, created right after the store transaction that enqueued it
// committed, and delivered by Cloud Tasks to the app's task endpoint
// (Endpoint), which runs the engine's handler.
//
// Cloud Tasks cannot join a Datastore transaction, so a create may be lost
// after its commit; the job's WatchdogTimerTs committed with the task, and
// the watchdog posts it again. Task ids are derived from task.Task.Name, so
// creating a task twice is refused by Cloud Tasks as a duplicate, which
// Post counts as done.
package cloudtasks

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sundial-cron/sundial/task"
)

// MaxScheduleAhead is how far ahead Cloud Tasks accepts a task's schedule
// time.
const MaxScheduleAhead = 30 * 24 * time.Hour

// tickHop is where a tick beyond MaxScheduleAhead is scheduled instead: a
// day short of the limit, so a slow create is not refused.
const tickHop = MaxScheduleAhead - 24*time.Hour

// Creator is the call Queue makes; *cloudtasks.Client has it.
type Creator interface {
	CreateTask(ctx context.Context, req *cloudtaskspb.CreateTaskRequest, opts ...gax.CallOption) (*cloudtaskspb.Task, error)
}

// Options configure a Queue.
type Options struct {
	// Queue is the queue's full name:
	// projects/PROJECT/locations/LOCATION/queues/QUEUE.
	Queue string
	// Target is where the queue's tasks are delivered.
	Target Destination
	// Now is the clock that far ETAs are measured from. Required.
	Now func() time.Time
}

// Queue creates Cloud Tasks tasks for the engine's tasks.
type Queue struct {
	client Creator
	opts   Options
}

var _ task.Queue = (*Queue)(nil)

var queueName = regexp.MustCompile(`^projects/[A-Za-z0-9.:-]+/locations/[A-Za-z0-9-]+/queues/[A-Za-z0-9-]{1,100}$`)

// New returns a queue that creates its tasks with client. It refuses
// incomplete or malformed options.
func New(client Creator, opts Options) (*Queue, error) {
	switch {
	case client == nil:
		return nil, errors.New("cloudtasks: client: missing")
	case !queueName.MatchString(opts.Queue):
		return nil, fmt.Errorf("cloudtasks: queue %q: want projects/PROJECT/locations/LOCATION/queues/QUEUE", opts.Queue)
	case opts.Target == nil:
		return nil, fmt.Errorf("cloudtasks: %w", errNoTarget)
	case opts.Now == nil:
		return nil, errors.New("cloudtasks: Now: missing")
	}
	if err := opts.Target.check(); err != nil {
		return nil, fmt.Errorf("cloudtasks: %w", err)
	}
	return &Queue{client: client, opts: opts}, nil
}

// Post creates a Cloud Tasks task for each of tasks. A task that already
// exists (this is a repeat, or Cloud Tasks still remembers the name) is
// done. It returns the errors of the creates that failed; the others stand.
func (q *Queue) Post(ctx context.Context, tasks []task.Task) error {
	var errs []error
	for _, t := range tasks {
		if err := q.create(ctx, t); err != nil {
			errs = append(errs, fmt.Errorf("cloudtasks: creating %s: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

func (q *Queue) create(ctx context.Context, t task.Task) error {
	eta, err := q.scheduleTime(t)
	if err != nil {
		return err
	}
	body, err := Encode(t)
	if err != nil {
		return err
	}
	ct := &cloudtaskspb.Task{Name: q.opts.Queue + "/tasks/" + TaskID(t.Name())}
	if !eta.IsZero() {
		ct.ScheduleTime = timestamppb.New(eta)
	}
	q.opts.Target.request(ct, body)
	_, err = q.client.CreateTask(ctx, &cloudtaskspb.CreateTaskRequest{Parent: q.opts.Queue, Task: ct})
	if status.Code(err) == codes.AlreadyExists {
		return nil
	}
	return err
}

// scheduleTime is when Cloud Tasks should deliver t (zero: now). The
// state machine hops ticks due later than its MaxTickDelay (29 days); a
// tick that is still too far (a machine configured otherwise) is scheduled
// tickHop ahead, which is safe because a tick delivered before its time
// schedules itself again. Any other task that far ahead is a bug and is
// refused rather than delivered early.
func (q *Queue) scheduleTime(t task.Task) (time.Time, error) {
	now := q.opts.Now()
	if !t.ETA.After(now.Add(MaxScheduleAhead)) {
		return t.ETA, nil
	}
	if t.Kind == task.TickLater {
		return now.Add(tickHop), nil
	}
	return time.Time{}, fmt.Errorf("ETA %s is more than %s ahead, which Cloud Tasks refuses", t.ETA.UTC().Format(time.RFC3339), MaxScheduleAhead)
}
