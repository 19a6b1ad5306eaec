package fieldmask_test

import (
	"strings"
	"testing"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sundial-cron/sundial/internal/fieldmask"
)

func stored() *cloudtaskspb.Queue {
	return &cloudtaskspb.Queue{
		Name:        "projects/p/locations/l/queues/q",
		RateLimits:  &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 10, MaxConcurrentDispatches: 20},
		RetryConfig: &cloudtaskspb.RetryConfig{MaxDoublings: 16, MinBackoff: durationpb.New(100e6)},
		State:       cloudtaskspb.Queue_RUNNING,
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		src   *cloudtaskspb.Queue
		paths []string
		want  func(q *cloudtaskspb.Queue)
	}{
		{
			name:  "a nested path changes that field and leaves its siblings",
			src:   &cloudtaskspb.Queue{RateLimits: &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 500, MaxConcurrentDispatches: 1}},
			paths: []string{"rate_limits.max_dispatches_per_second"},
			want:  func(q *cloudtaskspb.Queue) { q.RateLimits.MaxDispatchesPerSecond = 500 },
		},
		{
			name:  "a field the source leaves unset is cleared",
			src:   &cloudtaskspb.Queue{},
			paths: []string{"retry_config.min_backoff"},
			want:  func(q *cloudtaskspb.Queue) { q.RetryConfig.MinBackoff = nil },
		},
		{
			name:  "a whole message path replaces the message",
			src:   &cloudtaskspb.Queue{RetryConfig: &cloudtaskspb.RetryConfig{MaxDoublings: 5}},
			paths: []string{"retry_config"},
			want:  func(q *cloudtaskspb.Queue) { q.RetryConfig = &cloudtaskspb.RetryConfig{MaxDoublings: 5} },
		},
		{
			name:  "no paths change nothing",
			src:   &cloudtaskspb.Queue{Name: "other"},
			paths: nil,
			want:  func(*cloudtaskspb.Queue) {},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, want := stored(), stored()
			if err := fieldmask.Apply(got, tc.src, tc.paths); err != nil {
				t.Fatal(err)
			}
			tc.want(want)
			if !proto.Equal(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
}

func TestApplyRefusesUnknownPathsAndChangesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, wantErr string }{
		{"rate_limits.no_such_field", `has no field "no_such_field"`},
		{"name.sub", "name is not a message"},
		{"", `has no field ""`},
	} {
		got := stored()
		src := &cloudtaskspb.Queue{RateLimits: &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 500}}
		err := fieldmask.Apply(got, src, []string{"rate_limits.max_dispatches_per_second", tc.path})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("path %q: err %v, want one saying %q", tc.path, err, tc.wantErr)
		}
		if !proto.Equal(got, stored()) {
			t.Errorf("path %q: changed the message to %v", tc.path, got)
		}
	}
}
