package gcpsetup

import (
	"fmt"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"cloud.google.com/go/scheduler/apiv1/schedulerpb"
)

// Change is one field of a resource that differs from what Sundial wants.
type Change struct {
	Field string // the field's path, as in the update mask
	Was   any    // what the resource had
	Want  any    // what Sundial sets
}

func (c Change) String() string {
	return fmt.Sprintf("%s %s -> %s", c.Field, show(c.Was), show(c.Want))
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// field is one field Sundial manages: its update-mask path and how to read
// it (safely on a resource that lacks the message holding it).
type field[M any] struct {
	path string
	get  func(M) any
}

// queueFields are the queue's fields Sundial manages; it leaves the
// others (routing, logging, max_attempts) as they are.
var queueFields = []field[*cloudtaskspb.Queue]{
	{"rate_limits.max_dispatches_per_second", func(q *cloudtaskspb.Queue) any { return q.GetRateLimits().GetMaxDispatchesPerSecond() }},
	{"rate_limits.max_concurrent_dispatches", func(q *cloudtaskspb.Queue) any { return q.GetRateLimits().GetMaxConcurrentDispatches() }},
	{"retry_config.min_backoff", func(q *cloudtaskspb.Queue) any { return q.GetRetryConfig().GetMinBackoff().AsDuration() }},
	{"retry_config.max_doublings", func(q *cloudtaskspb.Queue) any { return q.GetRetryConfig().GetMaxDoublings() }},
	{"retry_config.max_backoff", func(q *cloudtaskspb.Queue) any { return q.GetRetryConfig().GetMaxBackoff().AsDuration() }},
	{"retry_config.max_retry_duration", func(q *cloudtaskspb.Queue) any { return q.GetRetryConfig().GetMaxRetryDuration().AsDuration() }},
}

// jobFields are the scheduler job's fields Sundial manages; it leaves the
// others (description, headers, body, retries) as they are.
var jobFields = []field[*schedulerpb.Job]{
	{"schedule", func(j *schedulerpb.Job) any { return j.GetSchedule() }},
	{"time_zone", func(j *schedulerpb.Job) any { return j.GetTimeZone() }},
	{"http_target.uri", func(j *schedulerpb.Job) any { return j.GetHttpTarget().GetUri() }},
	{"http_target.http_method", func(j *schedulerpb.Job) any { return j.GetHttpTarget().GetHttpMethod() }},
	{"http_target.oidc_token.service_account_email", func(j *schedulerpb.Job) any {
		return j.GetHttpTarget().GetOidcToken().GetServiceAccountEmail()
	}},
	{"http_target.oidc_token.audience", func(j *schedulerpb.Job) any { return j.GetHttpTarget().GetOidcToken().GetAudience() }},
	{"attempt_deadline", func(j *schedulerpb.Job) any { return j.GetAttemptDeadline().AsDuration() }},
}

// diff lists the managed fields in which got differs from want, in the
// order of fields.
func diff[M any](fields []field[M], want, got M) []Change {
	var changes []Change
	for _, f := range fields {
		if w, g := f.get(want), f.get(got); w != g {
			changes = append(changes, Change{Field: f.path, Was: g, Want: w})
		}
	}
	return changes
}

// paths are the update-mask paths of changes.
func paths(changes []Change) []string {
	p := make([]string, len(changes))
	for i, c := range changes {
		p[i] = c.Field
	}
	return p
}
