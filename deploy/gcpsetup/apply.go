package gcpsetup

import (
	"context"
	"fmt"
	"strings"

	cloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	scheduler "cloud.google.com/go/scheduler/apiv1"
	"cloud.google.com/go/scheduler/apiv1/schedulerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// Action is what was done to a resource, or would be in a dry run.
type Action string

// The actions.
const (
	Created   Action = "created"
	Updated   Action = "updated"
	Unchanged Action = "unchanged"
)

// Result is what happened to one resource.
type Result struct {
	Kind    string   // "queue" or "scheduler job"
	Name    string   // the resource's full name
	Action  Action   // in a dry run, what Apply would do
	Changes []Change // Updated: each field put back, with its old value
	DryRun  bool     // nothing was written
	// Note is something worth a look that Sundial leaves alone, such as
	// a queue or job paused by hand.
	Note string
}

func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", r.Kind, r.Name)
	switch {
	case r.DryRun && r.Action == Created:
		b.WriteString("would create")
	case r.DryRun && r.Action == Updated:
		b.WriteString("would update")
	default:
		b.WriteString(string(r.Action))
	}
	for i, c := range r.Changes {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		b.WriteString(sep + c.String())
	}
	if r.Note != "" {
		b.WriteString(" (" + r.Note + ")")
	}
	return b.String()
}

// Clients are the APIs Apply and Plan call.
type Clients struct {
	Tasks     *cloudtasks.Client
	Scheduler *scheduler.CloudSchedulerClient
}

// Apply makes the queue and the scheduler jobs what s says: it creates
// those missing and updates, in those that differ, only the fields that
// differ. It returns a Result per resource, the queue first; on an error,
// those so far. Invalid settings are refused before any call.
func (c Clients) Apply(ctx context.Context, s Settings) ([]Result, error) {
	return c.run(ctx, s, false)
}

// Plan reads what exists and reports what Apply would do, writing
// nothing.
func (c Clients) Plan(ctx context.Context, s Settings) ([]Result, error) {
	return c.run(ctx, s, true)
}

func (c Clients) run(ctx context.Context, s Settings, dryRun bool) ([]Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var results []Result
	r, err := c.queue(ctx, s.locationName(), s.DesiredQueue(), dryRun)
	if err != nil {
		return results, err
	}
	results = append(results, r)
	for _, j := range s.DesiredJobs() {
		r, err := c.job(ctx, s.locationName(), j, dryRun)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

func (c Clients) queue(ctx context.Context, parent string, want *cloudtaskspb.Queue, dryRun bool) (Result, error) {
	r := Result{Kind: "queue", Name: want.Name, DryRun: dryRun}
	got, err := c.Tasks.GetQueue(ctx, &cloudtaskspb.GetQueueRequest{Name: want.Name})
	if status.Code(err) == codes.NotFound {
		r.Action, err = Created, nil
		if !dryRun {
			_, err = c.Tasks.CreateQueue(ctx, &cloudtaskspb.CreateQueueRequest{Parent: parent, Queue: want})
		}
		return r, wrap(r, err)
	}
	if err != nil {
		return r, wrap(r, err)
	}
	if st := got.GetState(); st != cloudtaskspb.Queue_RUNNING {
		r.Note = fmt.Sprintf("state %s, left as it is", st)
	}
	r.Action, r.Changes = Unchanged, diff(queueFields, want, got)
	if len(r.Changes) > 0 {
		r.Action = Updated
		if !dryRun {
			_, err = c.Tasks.UpdateQueue(ctx, &cloudtaskspb.UpdateQueueRequest{
				Queue: want, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths(r.Changes)},
			})
		}
	}
	return r, wrap(r, err)
}

func (c Clients) job(ctx context.Context, parent string, want *schedulerpb.Job, dryRun bool) (Result, error) {
	r := Result{Kind: "scheduler job", Name: want.Name, DryRun: dryRun}
	got, err := c.Scheduler.GetJob(ctx, &schedulerpb.GetJobRequest{Name: want.Name})
	if status.Code(err) == codes.NotFound {
		r.Action, err = Created, nil
		if !dryRun {
			_, err = c.Scheduler.CreateJob(ctx, &schedulerpb.CreateJobRequest{Parent: parent, Job: want})
		}
		return r, wrap(r, err)
	}
	if err != nil {
		return r, wrap(r, err)
	}
	if st := got.GetState(); st != schedulerpb.Job_ENABLED {
		r.Note = fmt.Sprintf("state %s, left as it is", st)
	}
	r.Action, r.Changes = Unchanged, diff(jobFields, want, got)
	if len(r.Changes) > 0 {
		r.Action = Updated
		if !dryRun {
			_, err = c.Scheduler.UpdateJob(ctx, &schedulerpb.UpdateJobRequest{
				Job: want, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths(r.Changes)},
			})
		}
	}
	return r, wrap(r, err)
}

// wrap names the resource a call failed on.
func wrap(r Result, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", r.Kind, r.Name, err)
}
