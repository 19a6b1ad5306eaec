package gcpsetup_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"cloud.google.com/go/scheduler/apiv1/schedulerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/sundial-cron/sundial/deploy/gcpsetup"
	"github.com/sundial-cron/sundial/deploy/gcpsetup/schedulertest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
)

var t0 = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

const (
	queueName    = "projects/sundial-test/locations/us-central1/queues/sundial-tasks"
	watchdogName = "projects/sundial-test/locations/us-central1/jobs/sundial-watchdog"
	refreshName  = "projects/sundial-test/locations/us-central1/jobs/sundial-refresh"
	invoker      = "sundial-invoker@sundial-test.iam.gserviceaccount.com"
)

func settings() gcpsetup.Settings {
	return gcpsetup.Settings{
		Project:   "sundial-test",
		Location:  "us-central1",
		Queue:     "sundial-tasks",
		PublicURL: "https://sundial-abc-uc.a.run.app/",
		Invoker:   invoker,
		Passes: []gcpsetup.Pass{
			{Job: "sundial-watchdog", Path: "/internal/cron/watchdog"},
			{Job: "sundial-refresh", Path: "/internal/cron/refresh"},
		},
	}
}

// cloud is a project on the in-test Cloud Tasks and Cloud Scheduler servers.
type cloud struct {
	tasks   *cloudtaskstest.Server
	sched   *schedulertest.Server
	clients gcpsetup.Clients
}

func newCloud(t *testing.T) *cloud {
	t.Helper()
	now := fakeclock.New(t0).Now
	tasks, err := cloudtaskstest.Start(cloudtaskstest.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tasks.Close)
	sched, err := schedulertest.Start(now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sched.Close)
	tc, err := tasks.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	sc, err := sched.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	return &cloud{tasks: tasks, sched: sched, clients: gcpsetup.Clients{Tasks: tc, Scheduler: sc}}
}

// writes are all writes so far on both servers.
func (c *cloud) writes() []string { return append(c.tasks.QueueWrites(), c.sched.Writes()...) }

// mark is how many writes each server has had.
type mark struct{ queue, sched int }

func (c *cloud) mark() mark { return mark{len(c.tasks.QueueWrites()), len(c.sched.Writes())} }

// since are the writes after m.
func (c *cloud) since(m mark) []string {
	return append(c.tasks.QueueWrites()[m.queue:], c.sched.Writes()[m.sched:]...)
}

func (c *cloud) apply(t *testing.T) []string {
	t.Helper()
	res, err := c.clients.Apply(t.Context(), settings())
	if err != nil {
		t.Fatal(err)
	}
	return lines(res)
}

func lines(res []gcpsetup.Result) []string {
	var out []string
	for _, r := range res {
		out = append(out, r.String())
	}
	return out
}

func sameLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestFirstRunCreatesTheQueueAndTheJobs(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	sameLines(t, "results", c.apply(t), []string{
		"queue " + queueName + ": created",
		"scheduler job " + watchdogName + ": created",
		"scheduler job " + refreshName + ": created",
	})
	sameLines(t, "writes", c.writes(), []string{"CreateQueue " + queueName, "CreateJob " + watchdogName, "CreateJob " + refreshName})

	q, err := c.clients.Tasks.GetQueue(t.Context(), &cloudtaskspb.GetQueueRequest{Name: queueName})
	if err != nil {
		t.Fatal(err)
	}
	rl, rc := q.GetRateLimits(), q.GetRetryConfig()
	if rl.GetMaxDispatchesPerSecond() != 500 || rl.GetMaxConcurrentDispatches() != 1000 ||
		rc.GetMinBackoff().AsDuration() != time.Second || rc.GetMaxDoublings() != 5 ||
		rc.GetMaxBackoff().AsDuration() != 5*time.Minute || rc.GetMaxRetryDuration().AsDuration() != 24*time.Hour {
		t.Errorf("queue %v, want rate 500/s, 1000 at once, backoff 1s doubling 5 times to 300s, for a day", q)
	}
	for _, tc := range []struct{ name, uri string }{
		{watchdogName, "https://sundial-abc-uc.a.run.app/internal/cron/watchdog"},
		{refreshName, "https://sundial-abc-uc.a.run.app/internal/cron/refresh"},
	} {
		j, err := c.clients.Scheduler.GetJob(t.Context(), &schedulerpb.GetJobRequest{Name: tc.name})
		if err != nil {
			t.Fatal(err)
		}
		h := j.GetHttpTarget()
		if j.GetSchedule() != "* * * * *" || j.GetTimeZone() != "Etc/UTC" || j.GetAttemptDeadline().AsDuration() != time.Minute ||
			h.GetUri() != tc.uri || h.GetHttpMethod() != schedulerpb.HttpMethod_POST ||
			h.GetOidcToken().GetServiceAccountEmail() != invoker || h.GetOidcToken().GetAudience() != tc.uri ||
			j.GetState() != schedulerpb.Job_ENABLED {
			t.Errorf("job %v, want every minute in UTC a POST to %s with a token for %s and that audience, 60s deadline", j, tc.uri, invoker)
		}
	}
}

func TestSecondRunChangesNothing(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	c.apply(t)
	before := c.mark()
	sameLines(t, "second run", c.apply(t), []string{
		"queue " + queueName + ": unchanged",
		"scheduler job " + watchdogName + ": unchanged",
		"scheduler job " + refreshName + ": unchanged",
	})
	sameLines(t, "writes", c.since(before), nil)
}

func TestDriftIsPutBackAndReported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		byHand    func(t *testing.T, c *cloud)
		wantLines []string
		wantWrite string
	}{
		{
			name: "a rate lowered by hand",
			byHand: func(t *testing.T, c *cloud) {
				updateQueue(t, c, []string{"rate_limits.max_dispatches_per_second"}, &cloudtaskspb.Queue{RateLimits: &cloudtaskspb.RateLimits{MaxDispatchesPerSecond: 10}})
			},
			wantLines: []string{
				"queue " + queueName + ": updated rate_limits.max_dispatches_per_second 10 -> 500",
				"scheduler job " + watchdogName + ": unchanged",
				"scheduler job " + refreshName + ": unchanged",
			},
			wantWrite: "UpdateQueue " + queueName + " [rate_limits.max_dispatches_per_second]",
		},
		{
			name: "retries shortened by hand",
			byHand: func(t *testing.T, c *cloud) {
				updateQueue(t, c, []string{"retry_config.max_doublings", "retry_config.max_retry_duration"}, &cloudtaskspb.Queue{RetryConfig: &cloudtaskspb.RetryConfig{
					MaxDoublings: 16, MaxRetryDuration: durationpb.New(time.Hour),
				}})
			},
			wantLines: []string{
				"queue " + queueName + ": updated retry_config.max_doublings 16 -> 5, retry_config.max_retry_duration 1h0m0s -> 24h0m0s",
				"scheduler job " + watchdogName + ": unchanged",
				"scheduler job " + refreshName + ": unchanged",
			},
			wantWrite: "UpdateQueue " + queueName + " [retry_config.max_doublings retry_config.max_retry_duration]",
		},
		{
			name: "a schedule changed by hand",
			byHand: func(t *testing.T, c *cloud) {
				updateJob(t, c, refreshName, []string{"schedule"}, func(j *schedulerpb.Job) { j.Schedule = "*/5 * * * *" })
			},
			wantLines: []string{
				"queue " + queueName + ": unchanged",
				"scheduler job " + watchdogName + ": unchanged",
				"scheduler job " + refreshName + `: updated schedule "*/5 * * * *" -> "* * * * *"`,
			},
			wantWrite: "UpdateJob " + refreshName + " [schedule]",
		},
		{
			name: "a job pointed at an old URL, its token for another account",
			byHand: func(t *testing.T, c *cloud) {
				updateJob(t, c, watchdogName, []string{"http_target.uri", "http_target.oidc_token"}, func(j *schedulerpb.Job) {
					j.GetHttpTarget().Uri = "https://old.example/internal/cron/watchdog"
					j.GetHttpTarget().GetOidcToken().ServiceAccountEmail = "someone@sundial-test.iam.gserviceaccount.com"
				})
			},
			wantLines: []string{
				"queue " + queueName + ": unchanged",
				"scheduler job " + watchdogName + `: updated http_target.uri "https://old.example/internal/cron/watchdog" -> "https://sundial-abc-uc.a.run.app/internal/cron/watchdog", ` +
					`http_target.oidc_token.service_account_email "someone@sundial-test.iam.gserviceaccount.com" -> "` + invoker + `"`,
				"scheduler job " + refreshName + ": unchanged",
			},
			wantWrite: "UpdateJob " + watchdogName + " [http_target.uri http_target.oidc_token.service_account_email]",
		},
		{
			name: "a job paused by hand is reported and stays paused",
			byHand: func(t *testing.T, c *cloud) {
				if _, err := c.clients.Scheduler.PauseJob(t.Context(), &schedulerpb.PauseJobRequest{Name: watchdogName}); err != nil {
					t.Fatal(err)
				}
			},
			wantLines: []string{
				"queue " + queueName + ": unchanged",
				"scheduler job " + watchdogName + ": unchanged (state PAUSED, left as it is)",
				"scheduler job " + refreshName + ": unchanged",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			c.apply(t)
			tc.byHand(t, c)
			before := c.mark()
			sameLines(t, "results", c.apply(t), tc.wantLines)
			var want []string
			if tc.wantWrite != "" {
				want = []string{tc.wantWrite}
			}
			sameLines(t, "the run's writes, with only the drifted fields in the mask", c.since(before), want)

			res, err := c.clients.Plan(t.Context(), settings())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Action != gcpsetup.Unchanged {
					t.Errorf("after putting it back, a plan says %s", r)
				}
			}
		})
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	res, err := c.clients.Plan(t.Context(), settings())
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "a plan on an empty project", lines(res), []string{
		"queue " + queueName + ": would create",
		"scheduler job " + watchdogName + ": would create",
		"scheduler job " + refreshName + ": would create",
	})
	sameLines(t, "writes", c.writes(), nil)
	if _, err := c.clients.Tasks.GetQueue(t.Context(), &cloudtaskspb.GetQueueRequest{Name: queueName}); status.Code(err) != codes.NotFound {
		t.Errorf("after a dry run, GetQueue: %v, want NotFound", err)
	}

	c.apply(t)
	updateJob(t, c, watchdogName, []string{"attempt_deadline"}, func(j *schedulerpb.Job) { j.AttemptDeadline = durationpb.New(3 * time.Minute) })
	before := c.mark()
	res, err = c.clients.Plan(t.Context(), settings())
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "a plan on a drifted job", lines(res), []string{
		"queue " + queueName + ": unchanged",
		"scheduler job " + watchdogName + ": would update attempt_deadline 3m0s -> 1m0s",
		"scheduler job " + refreshName + ": unchanged",
	})
	sameLines(t, "writes", c.since(before), nil)
}

func TestBadSettingsAreRefusedBeforeAnyCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		edit    func(s *gcpsetup.Settings)
		wantErr []string
	}{
		{"no project", func(s *gcpsetup.Settings) { s.Project = "" }, []string{"project: missing"}},
		{"a project name instead of its id", func(s *gcpsetup.Settings) { s.Project = "Sundial Test" }, []string{`project "Sundial Test": want a project id`}},
		{"App Engine's name for a region", func(s *gcpsetup.Settings) { s.Location = "us-central" }, []string{`location "us-central": want a region like us-central1`}},
		{"a queue name with an underscore", func(s *gcpsetup.Settings) { s.Queue = "sundial_tasks" }, []string{`queue "sundial_tasks"`}},
		{"a public URL over http", func(s *gcpsetup.Settings) { s.PublicURL = "http://sundial.example" }, []string{`public URL "http://sundial.example": want https://HOST`}},
		{"a public URL with a path", func(s *gcpsetup.Settings) { s.PublicURL = "https://sundial.example/internal/tasks" }, []string{"without a path"}},
		{"an invoker that is not an email address", func(s *gcpsetup.Settings) { s.Invoker = "sundial-invoker" }, []string{`invoker "sundial-invoker": want a service account's email address`}},
		{"one pass twice", func(s *gcpsetup.Settings) { s.Passes = append(s.Passes, s.Passes[0]) }, []string{`pass job "sundial-watchdog": named twice`}},
		{"everything missing names each", func(s *gcpsetup.Settings) { *s = gcpsetup.Settings{Queue: "q"} }, []string{
			"project: missing", "location: missing", "public URL: missing", "invoker: missing", "passes: none",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := settings()
			tc.edit(&s)
			// No clients: a call would panic, so an error proves none was made.
			for _, run := range []func(context.Context, gcpsetup.Settings) ([]gcpsetup.Result, error){gcpsetup.Clients{}.Apply, gcpsetup.Clients{}.Plan} {
				res, err := run(t.Context(), s)
				if err == nil {
					t.Fatalf("no error, results %v", res)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
			}
		})
	}
}

func updateQueue(t *testing.T, c *cloud, mask []string, q *cloudtaskspb.Queue) {
	t.Helper()
	q.Name = queueName
	if _, err := c.clients.Tasks.UpdateQueue(t.Context(), &cloudtaskspb.UpdateQueueRequest{Queue: q, UpdateMask: &fieldmaskpb.FieldMask{Paths: mask}}); err != nil {
		t.Fatal(err)
	}
}

func updateJob(t *testing.T, c *cloud, name string, mask []string, edit func(*schedulerpb.Job)) {
	t.Helper()
	j, err := c.clients.Scheduler.GetJob(t.Context(), &schedulerpb.GetJobRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	edit(j)
	if _, err := c.clients.Scheduler.UpdateJob(t.Context(), &schedulerpb.UpdateJobRequest{Job: j, UpdateMask: &fieldmaskpb.FieldMask{Paths: mask}}); err != nil {
		t.Fatal(err)
	}
}
