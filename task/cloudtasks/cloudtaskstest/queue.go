package cloudtaskstest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sundial-cron/sundial/internal/fieldmask"
)

// The queues are kept and returned with Cloud Tasks' rules, but they do
// not govern delivery (Options.Retry does), and tasks may be created in a
// queue that was never created: the task tests need no queue set-up.

var location = regexp.MustCompile(`^projects/[A-Za-z0-9.:-]+/locations/[A-Za-z0-9-]+$`)

// fillDefaults gives the settings a queue's creation leaves unset what
// Cloud Tasks gives them. Each field is a whole: a backoff of 1s does not
// take the nanoseconds of the default 0.1s.
func fillDefaults(q *cloudtaskspb.Queue) {
	if q.RateLimits == nil {
		q.RateLimits = &cloudtaskspb.RateLimits{}
	}
	if q.RetryConfig == nil {
		q.RetryConfig = &cloudtaskspb.RetryConfig{}
	}
	rl, rc := q.RateLimits, q.RetryConfig
	if rl.MaxDispatchesPerSecond == 0 {
		rl.MaxDispatchesPerSecond = 500
	}
	if rl.MaxConcurrentDispatches == 0 {
		rl.MaxConcurrentDispatches = 1000
	}
	if rc.MaxAttempts == 0 {
		rc.MaxAttempts = 100
	}
	if rc.MinBackoff == nil {
		rc.MinBackoff = durationpb.New(100 * time.Millisecond)
	}
	if rc.MaxBackoff == nil {
		rc.MaxBackoff = durationpb.New(time.Hour)
	}
	if rc.MaxDoublings == 0 {
		rc.MaxDoublings = 16
	}
}

// QueueWrites lists the queue writes so far, one per CreateQueue or
// UpdateQueue, as "CreateQueue NAME" or "UpdateQueue NAME [MASK PATHS]".
func (s *Server) QueueWrites() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queueCalls...)
}

// GetQueue implements the Cloud Tasks call.
func (s *Server) GetQueue(_ context.Context, req *cloudtaskspb.GetQueueRequest) (*cloudtaskspb.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "queue %s not found", req.GetName())
	}
	return proto.Clone(q).(*cloudtaskspb.Queue), nil
}

// CreateQueue implements the Cloud Tasks call: the queue's name must be
// under the parent, and a name in use is AlreadyExists.
func (s *Server) CreateQueue(_ context.Context, req *cloudtaskspb.CreateQueueRequest) (*cloudtaskspb.Queue, error) {
	if !location.MatchString(req.GetParent()) {
		return nil, status.Errorf(codes.InvalidArgument, "parent %q: want projects/PROJECT/locations/LOCATION", req.GetParent())
	}
	in := req.GetQueue()
	if !strings.HasPrefix(in.GetName(), req.GetParent()+"/queues/") {
		return nil, status.Errorf(codes.InvalidArgument, "queue name %q: want %s/queues/QUEUE", in.GetName(), req.GetParent())
	}
	q := proto.Clone(in).(*cloudtaskspb.Queue)
	fillDefaults(q)
	q.State, q.PurgeTime = cloudtaskspb.Queue_RUNNING, nil
	if err := checkQueue(q); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.queues[q.Name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "queue %s already exists", q.Name)
	}
	s.queues[q.Name] = q
	s.queueCalls = append(s.queueCalls, "CreateQueue "+q.Name)
	return proto.Clone(q).(*cloudtaskspb.Queue), nil
}

// UpdateQueue implements the Cloud Tasks call: it changes the fields the
// update mask names (all of them if it is empty), and, as Cloud Tasks
// does, creates the queue if there is none.
func (s *Server) UpdateQueue(_ context.Context, req *cloudtaskspb.UpdateQueueRequest) (*cloudtaskspb.Queue, error) {
	in := req.GetQueue()
	if !queueName.MatchString(in.GetName()) {
		return nil, status.Errorf(codes.InvalidArgument, "queue name %q: want projects/PROJECT/locations/LOCATION/queues/QUEUE", in.GetName())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := &cloudtaskspb.Queue{Name: in.Name}
	fillDefaults(q)
	if old, ok := s.queues[in.Name]; ok {
		q = proto.Clone(old).(*cloudtaskspb.Queue)
	}
	state, purged := q.State, q.PurgeTime
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		q = proto.Clone(in).(*cloudtaskspb.Queue)
	} else if err := fieldmask.Apply(q, in, paths); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	// Output-only fields are not the caller's to change.
	q.State, q.PurgeTime = state, purged
	if q.State == cloudtaskspb.Queue_STATE_UNSPECIFIED {
		q.State = cloudtaskspb.Queue_RUNNING
	}
	if err := checkQueue(q); err != nil {
		return nil, err
	}
	s.queues[q.Name] = q
	s.queueCalls = append(s.queueCalls, fmt.Sprintf("UpdateQueue %s %v", q.Name, paths))
	return proto.Clone(q).(*cloudtaskspb.Queue), nil
}

// checkQueue refuses the settings Cloud Tasks refuses.
func checkQueue(q *cloudtaskspb.Queue) error {
	if !queueName.MatchString(q.GetName()) {
		return status.Errorf(codes.InvalidArgument, "queue name %q: want projects/PROJECT/locations/LOCATION/queues/QUEUE", q.GetName())
	}
	rl, rc := q.GetRateLimits(), q.GetRetryConfig()
	switch {
	case rl.GetMaxDispatchesPerSecond() < 0 || rl.GetMaxDispatchesPerSecond() > 500:
		return status.Errorf(codes.InvalidArgument, "rate_limits.max_dispatches_per_second %v: want at most 500", rl.GetMaxDispatchesPerSecond())
	case rl.GetMaxConcurrentDispatches() < 0 || rl.GetMaxConcurrentDispatches() > 5000:
		return status.Errorf(codes.InvalidArgument, "rate_limits.max_concurrent_dispatches %d: want at most 5000", rl.GetMaxConcurrentDispatches())
	case rc.GetMaxAttempts() < -1:
		return status.Errorf(codes.InvalidArgument, "retry_config.max_attempts %d: want -1 (unlimited) or more", rc.GetMaxAttempts())
	case rc.GetMaxDoublings() < 0:
		return status.Errorf(codes.InvalidArgument, "retry_config.max_doublings %d: want 0 or more", rc.GetMaxDoublings())
	case rc.GetMinBackoff().AsDuration() < 0 || rc.GetMaxBackoff().AsDuration() < 0 || rc.GetMaxRetryDuration().AsDuration() < 0:
		return status.Error(codes.InvalidArgument, "retry_config: negative duration")
	case rc.GetMaxBackoff() != nil && rc.GetMinBackoff().AsDuration() > rc.GetMaxBackoff().AsDuration():
		return status.Errorf(codes.InvalidArgument, "retry_config.min_backoff %s is more than max_backoff %s", rc.GetMinBackoff().AsDuration(), rc.GetMaxBackoff().AsDuration())
	}
	return nil
}
