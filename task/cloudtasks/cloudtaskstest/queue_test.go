package cloudtaskstest_test

import (
	"context"
	"testing"
	"time"

	cloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
)

const parent = "projects/proj/locations/us-central1"

func queueClient(t *testing.T) (*cloudtaskstest.Server, *cloudtasks.Client) {
	t.Helper()
	srv, err := cloudtaskstest.Start(cloudtaskstest.Options{Now: fakeclock.New(t0).Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := srv.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: %v, want %v", what, err, code)
	}
}

func TestQueueCreateGetUpdate(t *testing.T) {
	t.Parallel()
	srv, c := queueClient(t)
	ctx := t.Context()

	_, err := c.GetQueue(ctx, &cloudtaskspb.GetQueueRequest{Name: queue})
	wantCode(t, "a queue never created", err, codes.NotFound)

	created, err := c.CreateQueue(ctx, &cloudtaskspb.CreateQueueRequest{Parent: parent, Queue: &cloudtaskspb.Queue{
		Name:       queue,
		RateLimits: &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 50},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := &cloudtaskspb.Queue{
		Name:       queue,
		RateLimits: &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 50, MaxConcurrentDispatches: 1000},
		RetryConfig: &cloudtaskspb.RetryConfig{
			MaxAttempts: 100, MinBackoff: durationpb.New(100 * time.Millisecond),
			MaxBackoff: durationpb.New(time.Hour), MaxDoublings: 16,
		},
		State: cloudtaskspb.Queue_RUNNING,
	}
	if !proto.Equal(created, want) {
		t.Fatalf("created %v\nwant the defaults for what was left unset: %v", created, want)
	}

	_, err = c.CreateQueue(ctx, &cloudtaskspb.CreateQueueRequest{Parent: parent, Queue: &cloudtaskspb.Queue{Name: queue}})
	wantCode(t, "creating it again", err, codes.AlreadyExists)

	// Only the masked field changes, though the request says others.
	updated, err := c.UpdateQueue(ctx, &cloudtaskspb.UpdateQueueRequest{
		Queue: &cloudtaskspb.Queue{
			Name:        queue,
			RateLimits:  &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 500, MaxConcurrentDispatches: 7},
			RetryConfig: &cloudtaskspb.RetryConfig{MaxDoublings: 5},
			State:       cloudtaskspb.Queue_PAUSED,
		},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"rate_limits.max_dispatches_per_second", "retry_config.max_doublings", "state"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want.RateLimits.MaxDispatchesPerSecond, want.RetryConfig.MaxDoublings = 500, 5
	if !proto.Equal(updated, want) {
		t.Fatalf("updated %v\nwant %v", updated, want)
	}
	got, err := c.GetQueue(ctx, &cloudtaskspb.GetQueueRequest{Name: queue})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("GetQueue %v\nwant %v", got, want)
	}
	wantWrites := []string{"CreateQueue " + queue, "UpdateQueue " + queue + " [rate_limits.max_dispatches_per_second retry_config.max_doublings state]"}
	if w := srv.QueueWrites(); len(w) != 2 || w[0] != wantWrites[0] || w[1] != wantWrites[1] {
		t.Errorf("QueueWrites %q, want %q", w, wantWrites)
	}
}

func TestQueueUpdateCreatesAMissingQueue(t *testing.T) {
	t.Parallel()
	_, c := queueClient(t)
	_, err := c.UpdateQueue(t.Context(), &cloudtaskspb.UpdateQueueRequest{
		Queue:      &cloudtaskspb.Queue{Name: queue, RateLimits: &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 5}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"rate_limits.max_dispatches_per_second"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetQueue(t.Context(), &cloudtaskspb.GetQueueRequest{Name: queue})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetRateLimits().GetMaxDispatchesPerSecond() != 5 || got.GetRateLimits().GetMaxConcurrentDispatches() != 1000 {
		t.Errorf("got %v, want rate 5 and the default concurrency", got)
	}
}

func TestQueueBadRequestsAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	srv, c := queueClient(t)
	ctx := t.Context()
	if _, err := c.CreateQueue(ctx, &cloudtaskspb.CreateQueueRequest{Parent: parent, Queue: &cloudtaskspb.Queue{Name: queue}}); err != nil {
		t.Fatal(err)
	}
	before, err := c.GetQueue(ctx, &cloudtaskspb.GetQueueRequest{Name: queue})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"a rate above 500", func() error {
			_, err := c.UpdateQueue(ctx, &cloudtaskspb.UpdateQueueRequest{
				Queue:      &cloudtaskspb.Queue{Name: queue, RateLimits: &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 501}},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"rate_limits.max_dispatches_per_second"}},
			})
			return err
		}},
		{"an update mask naming no field", func() error {
			_, err := c.UpdateQueue(ctx, &cloudtaskspb.UpdateQueueRequest{
				Queue:      &cloudtaskspb.Queue{Name: queue},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"rate_limits.speed"}},
			})
			return err
		}},
		{"a min backoff above the max", func() error {
			_, err := c.UpdateQueue(ctx, &cloudtaskspb.UpdateQueueRequest{
				Queue:      &cloudtaskspb.Queue{Name: queue, RetryConfig: &cloudtaskspb.RetryConfig{MinBackoff: durationpb.New(2 * time.Hour)}},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"retry_config.min_backoff"}},
			})
			return err
		}},
		{"a queue outside its parent", func() error {
			_, err := c.CreateQueue(ctx, &cloudtaskspb.CreateQueueRequest{Parent: parent, Queue: &cloudtaskspb.Queue{Name: "projects/other/locations/us-central1/queues/q"}})
			return err
		}},
	} {
		wantCode(t, tc.name, tc.call(), codes.InvalidArgument)
	}
	after, err := c.GetQueue(ctx, &cloudtaskspb.GetQueueRequest{Name: queue})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(before, after) {
		t.Errorf("the queue changed from %v to %v", before, after)
	}
	if w := srv.QueueWrites(); len(w) != 1 {
		t.Errorf("QueueWrites %q, want only the create", w)
	}
}
