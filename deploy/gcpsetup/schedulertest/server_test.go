package schedulertest_test

import (
	"testing"
	"time"

	scheduler "cloud.google.com/go/scheduler/apiv1"
	"cloud.google.com/go/scheduler/apiv1/schedulerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sundial-cron/sundial/deploy/gcpsetup/schedulertest"
)

var t0 = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

const (
	parent = "projects/proj/locations/us-central1"
	name   = parent + "/jobs/sundial-watchdog"
)

func start(t *testing.T) (*schedulertest.Server, *scheduler.CloudSchedulerClient) {
	t.Helper()
	srv, err := schedulertest.Start(func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

func httpJob() *schedulerpb.Job {
	return &schedulerpb.Job{
		Name:     name,
		Schedule: "* * * * *",
		Target: &schedulerpb.Job_HttpTarget{HttpTarget: &schedulerpb.HttpTarget{
			Uri: "https://sundial.example/internal/cron/watchdog",
			AuthorizationHeader: &schedulerpb.HttpTarget_OidcToken{OidcToken: &schedulerpb.OidcToken{
				ServiceAccountEmail: "invoker@proj.iam.gserviceaccount.com",
			}},
		}},
	}
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: %v, want %v", what, err, code)
	}
}

func TestJobCreateGetUpdate(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	ctx := t.Context()

	_, err := c.GetJob(ctx, &schedulerpb.GetJobRequest{Name: name})
	wantCode(t, "a job never created", err, codes.NotFound)

	created, err := c.CreateJob(ctx, &schedulerpb.CreateJobRequest{Parent: parent, Job: httpJob()})
	if err != nil {
		t.Fatal(err)
	}
	want := httpJob()
	want.GetHttpTarget().HttpMethod = schedulerpb.HttpMethod_POST
	want.AttemptDeadline = durationpb.New(3 * time.Minute)
	want.State, want.UserUpdateTime = schedulerpb.Job_ENABLED, timestamppb.New(t0)
	if !proto.Equal(created, want) {
		t.Fatalf("created %v\nwant the defaults for what was left unset: %v", created, want)
	}

	_, err = c.CreateJob(ctx, &schedulerpb.CreateJobRequest{Parent: parent, Job: httpJob()})
	wantCode(t, "creating it again", err, codes.AlreadyExists)

	// Only the masked fields change, though the request says others.
	change := httpJob()
	change.Schedule, change.TimeZone = "*/5 * * * *", "Europe/Paris"
	change.GetHttpTarget().GetOidcToken().Audience = "https://aud.example"
	change.State = schedulerpb.Job_PAUSED
	updated, err := c.UpdateJob(ctx, &schedulerpb.UpdateJobRequest{
		Job:        change,
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"schedule", "http_target.oidc_token.audience", "state"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want.Schedule = "*/5 * * * *"
	want.GetHttpTarget().GetOidcToken().Audience = "https://aud.example"
	if !proto.Equal(updated, want) {
		t.Fatalf("updated %v\nwant %v", updated, want)
	}
	got, err := c.GetJob(ctx, &schedulerpb.GetJobRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("GetJob %v\nwant %v", got, want)
	}
	wantWrites := []string{"CreateJob " + name, "UpdateJob " + name + " [schedule http_target.oidc_token.audience state]"}
	if w := srv.Writes(); len(w) != 2 || w[0] != wantWrites[0] || w[1] != wantWrites[1] {
		t.Errorf("Writes %q, want %q", w, wantWrites)
	}
}

func TestJobBadRequestsAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	srv, c := start(t)
	ctx := t.Context()
	before, err := c.CreateJob(ctx, &schedulerpb.CreateJobRequest{Parent: parent, Job: httpJob()})
	if err != nil {
		t.Fatal(err)
	}
	update := func(paths []string, edit func(j *schedulerpb.Job)) error {
		j := httpJob()
		edit(j)
		_, err := c.UpdateJob(ctx, &schedulerpb.UpdateJobRequest{Job: j, UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
		return err
	}
	for _, tc := range []struct {
		name string
		code codes.Code
		call func() error
	}{
		{"a schedule that is not unix-cron", codes.InvalidArgument, func() error {
			return update([]string{"schedule"}, func(j *schedulerpb.Job) { j.Schedule = "every minute" })
		}},
		{"a time zone not in the tz database", codes.InvalidArgument, func() error {
			return update([]string{"time_zone"}, func(j *schedulerpb.Job) { j.TimeZone = "Mars/Olympus" })
		}},
		{"an attempt deadline over 30 minutes", codes.InvalidArgument, func() error {
			return update([]string{"attempt_deadline"}, func(j *schedulerpb.Job) { j.AttemptDeadline = durationpb.New(time.Hour) })
		}},
		{"an update mask naming no field", codes.InvalidArgument, func() error {
			return update([]string{"http_target.url"}, func(*schedulerpb.Job) {})
		}},
		{"a relative URI", codes.InvalidArgument, func() error {
			return update([]string{"http_target.uri"}, func(j *schedulerpb.Job) { j.GetHttpTarget().Uri = "/internal/cron/watchdog" })
		}},
		{"an update of a job that does not exist", codes.NotFound, func() error {
			return update([]string{"schedule"}, func(j *schedulerpb.Job) { j.Name = parent + "/jobs/other" })
		}},
		{"a job outside its parent", codes.InvalidArgument, func() error {
			j := httpJob()
			j.Name = "projects/other/locations/us-central1/jobs/x"
			_, err := c.CreateJob(ctx, &schedulerpb.CreateJobRequest{Parent: parent, Job: j})
			return err
		}},
	} {
		wantCode(t, tc.name, tc.call(), tc.code)
	}
	after, err := c.GetJob(ctx, &schedulerpb.GetJobRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(before, after) {
		t.Errorf("the job changed from %v to %v", before, after)
	}
	if w := srv.Writes(); len(w) != 1 {
		t.Errorf("Writes %q, want only the create", w)
	}
}
