package gcpsetup

import (
	"strings"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"cloud.google.com/go/scheduler/apiv1/schedulerpb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The queue's settings. queue.yaml gives App Engine the same numbers and
// the reasons for them; the two must agree (queue_yaml_test.go checks).
// The API cannot set queue.yaml's bucket_size: Cloud Tasks derives the
// burst from the rate. Nor is max_attempts set: a task stops only when it
// has had max_attempts tries and MaxRetryDuration has passed, and at
// MaxBackoff a day holds more tries than the default 100, so the duration
// decides.
const (
	Rate             = 500.0 // dispatches a second, the most one queue allows
	MaxConcurrent    = 1000  // dispatches under way at once
	MinBackoff       = time.Second
	MaxDoublings     = 5
	MaxBackoff       = 300 * time.Second
	MaxRetryDuration = 24 * time.Hour
)

// The scheduler jobs' settings: every minute, like cron.yaml. A missed
// run needs no retry (the next minute does the same work), so the jobs
// keep Cloud Scheduler's default of none.
const (
	Schedule = "* * * * *"
	// TimeZone is UTC under the name gcloud gives it by default, so jobs
	// made by hand with docs/deploy.md's commands are not reported as
	// drifted.
	TimeZone = "Etc/UTC"
	// AttemptDeadline bounds one pass; a pass that takes longer fails
	// and the next minute's starts over.
	AttemptDeadline = 60 * time.Second
)

// DesiredQueue is the queue as Sundial wants it. s must be valid.
func (s Settings) DesiredQueue() *cloudtaskspb.Queue {
	return &cloudtaskspb.Queue{
		Name: s.QueueName(),
		RateLimits: &cloudtaskspb.RateLimits{
			MaxDispatchesPerSecond:  Rate,
			MaxConcurrentDispatches: MaxConcurrent,
		},
		RetryConfig: &cloudtaskspb.RetryConfig{
			MinBackoff:       durationpb.New(MinBackoff),
			MaxDoublings:     MaxDoublings,
			MaxBackoff:       durationpb.New(MaxBackoff),
			MaxRetryDuration: durationpb.New(MaxRetryDuration),
		},
	}
}

// DesiredJobs are the scheduler jobs as Sundial wants them, one per pass:
// a POST to the pass's URL with a token for the invoker whose audience is
// that URL, which is what the service's OIDC gate checks. s must be valid.
func (s Settings) DesiredJobs() []*schedulerpb.Job {
	base := strings.TrimSuffix(s.PublicURL, "/")
	jobs := make([]*schedulerpb.Job, 0, len(s.Passes))
	for _, p := range s.Passes {
		uri := base + p.Path
		jobs = append(jobs, &schedulerpb.Job{
			Name:     s.JobName(p.Job),
			Schedule: Schedule,
			TimeZone: TimeZone,
			Target: &schedulerpb.Job_HttpTarget{HttpTarget: &schedulerpb.HttpTarget{
				Uri:        uri,
				HttpMethod: schedulerpb.HttpMethod_POST,
				AuthorizationHeader: &schedulerpb.HttpTarget_OidcToken{OidcToken: &schedulerpb.OidcToken{
					ServiceAccountEmail: s.Invoker,
					Audience:            uri,
				}},
			}},
			AttemptDeadline: durationpb.New(AttemptDeadline),
		})
	}
	return jobs
}
