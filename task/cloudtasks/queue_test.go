package cloudtasks_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	gax "github.com/googleapis/gax-go/v2"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/cloudtasks"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
	"github.com/sundial-cron/sundial/task/tasktest"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

const queuePath = "projects/proj/locations/us-central1/queues/sundial"

// quiet drops the logs of the failed deliveries the tests cause on purpose.
var quiet = slog.New(slog.DiscardHandler)

// The account Cloud Run's tasks are signed for, and the audience they ask.
const (
	account  = "sundial-tasks@proj.iam.gserviceaccount.com"
	audience = "https://sundial.example.com/internal/tasks"
)

// rig is a Queue on the test Cloud Tasks server, delivering to the task
// endpoint of an app served on loopback, all on a fake clock.
type rig struct {
	clock *fakeclock.Clock
	srv   *cloudtaskstest.Server
	api   interface {
		GetTask(context.Context, *cloudtaskspb.GetTaskRequest, ...gax.CallOption) (*cloudtaskspb.Task, error)
	}
	queue *cloudtasks.Queue

	// What restart needs to start the app and its queue again.
	tg       target
	gate     web.Gate
	target   cloudtasks.Destination
	handler  task.Handler
	endpoint atomic.Pointer[web.TaskEndpoint]
}

type target string

const (
	appEngine target = "App Engine"
	cloudRun  target = "Cloud Run"
)

func newRig(t *testing.T, clock *fakeclock.Clock, tg target, retry cloudtasks.Retry, handler task.Handler) *rig {
	t.Helper()
	r := &rig{clock: clock, tg: tg, handler: handler}
	// The app's address outlives its restarts, as a deployment's does.
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/internal/tasks" {
			http.NotFound(w, req)
			return
		}
		r.endpoint.Load().ServeHTTP(w, req)
	}))
	t.Cleanup(app.Close)

	opts := cloudtaskstest.Options{Now: clock.Now, Retry: retry}
	// A delivery the stand-in takes as failed is retried: said here, so
	// that a retry no handler asked for names its cause (the suite's rare
	// flake, a redelivery after the handler had answered).
	opts.Delivered = func(d cloudtaskstest.Delivery) {
		if !d.OK() {
			t.Logf("the stand-in's delivery of %s, attempt %d, at %v: status %d, err %v", d.Task, d.Attempt, d.At, d.Status, d.Err)
		}
	}
	switch tg {
	case appEngine:
		r.gate, r.target = web.AppEngineQueue("sundial"), cloudtasks.AppEngine{Path: "/internal/tasks"}
		opts.AppEngineURL = app.URL
	case cloudRun:
		is, err := cloudtaskstest.NewIssuer()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(is.Close)
		gate, err := web.SignedBy(account, signin.IDTokenOptions{Issuer: is.URL(), KeysURL: is.KeysURL(), Audience: audience, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		r.gate = gate
		r.target = cloudtasks.HTTP{URL: app.URL + "/internal/tasks", ServiceAccount: account, Audience: audience}
		opts.Issuer = is
	}
	srv, err := cloudtaskstest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	r.srv = srv
	r.start(t)
	return r
}

// start starts the app: its endpoint, and its queue on a new client.
func (r *rig) start(t *testing.T) {
	t.Helper()
	r.endpoint.Store(&web.TaskEndpoint{Decode: cloudtasks.Decode, Gate: r.gate, Handler: r.handler, Logger: quiet})
	client, err := r.srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	q, err := cloudtasks.New(client, cloudtasks.Options{Queue: queuePath, Target: r.target, Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	r.api, r.queue = client, q
}

// Post implements tasktest.Queue.
func (r *rig) Post(ctx context.Context, tasks ...task.Task) error {
	return r.queue.Post(ctx, tasks)
}

// DeliverDue implements tasktest.Queue: the server's own step.
func (r *rig) DeliverDue(t *testing.T) int {
	return r.srv.DeliverDue(t.Context())
}

// Restart implements tasktest.Queue: the app stops (its client and
// queue are dropped, its endpoint replaced) and starts again; the tasks
// live in the Cloud Tasks service, which goes on.
func (r *rig) Restart(t *testing.T) {
	r.start(t)
}

// scheduled is when the server will deliver tk.
func (r *rig) scheduled(t *testing.T, tk task.Task) time.Time {
	t.Helper()
	got, err := r.api.GetTask(t.Context(), &cloudtaskspb.GetTaskRequest{Name: queuePath + "/tasks/" + cloudtasks.TaskID(tk.Name())})
	if err != nil {
		t.Fatalf("GetTask(%s): %v", tk, err)
	}
	return got.GetScheduleTime().AsTime()
}

var (
	tick  = task.Task{Kind: task.TickLater, JobID: "proj/job", Nonce: 11, ETA: t0}
	start = task.Task{Kind: task.StartInvocation, JobID: "proj/job", Nonce: 12, ETA: t0, Invocation: "inv-1", Attempt: 1}
)

// suiteRetry backs off 10s, 20s, 40s, then 80s, 120s... (linear after two
// doublings), so the suite's four failures see both parts of the rule.
var suiteRetry = cloudtasks.Retry{MinBackoff: 10 * time.Second, MaxBackoff: 300 * time.Second, MaxDoublings: 2}

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, tg := range []target{appEngine, cloudRun} {
		t.Run(string(tg), func(t *testing.T) {
			t.Parallel()
			tasktest.Run(t, tasktest.Backend{
				Open: func(t *testing.T, clock *fakeclock.Clock, handler task.Handler) tasktest.Queue {
					return newRig(t, clock, tg, suiteRetry, handler)
				},
				Backoff: suiteRetry.Backoff,
				// The stand-in's default, Cloud Tasks' hour for queues
				// made with its API.
				NameHeld: time.Hour,
				// Nothing is held by the app: a restarted one is
				// delivered everything at once.
				Recovery: 0,
			})
		})
	}
}

func TestQueueFarETAs(t *testing.T) {
	t.Parallel()
	r := newRig(t, fakeclock.New(t0), appEngine, cloudtasks.DefaultRetry, func(context.Context, task.Task) error { return nil })
	farTick, farStart := tick, start
	farTick.ETA = t0.Add(40 * 24 * time.Hour)
	farStart.ETA = farTick.ETA
	err := r.queue.Post(t.Context(), []task.Task{farStart, farTick})
	if err == nil || !strings.Contains(err.Error(), farStart.String()) || strings.Contains(err.Error(), farTick.String()) {
		t.Fatalf("Post = %v, want an error naming only the start beyond 30 days", err)
	}
	if got, want := r.scheduled(t, farTick), t0.Add(29*24*time.Hour); !got.Equal(want) {
		t.Errorf("a tick 40 days ahead is scheduled at %v, want a hop to %v", got, want)
	}
	if p := r.srv.Pending(); p != 1 {
		t.Errorf("%d tasks pending, want only the tick", p)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return t0 }
	srv, err := cloudtaskstest.Start(cloudtaskstest.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client, err := srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ae := cloudtasks.AppEngine{Path: "/internal/tasks"}
	tests := []struct {
		name    string
		opts    cloudtasks.Options
		wantErr string
	}{
		{"a short queue name", cloudtasks.Options{Queue: "sundial", Target: ae, Now: now}, `queue "sundial"`},
		{"a queue name with a bad character", cloudtasks.Options{Queue: "projects/p/locations/l/queues/sun_dial", Target: ae, Now: now}, "queue"},
		{"no target", cloudtasks.Options{Queue: queuePath, Now: now}, "target: missing"},
		{"no clock", cloudtasks.Options{Queue: queuePath, Target: ae}, "Now: missing"},
		{"an App Engine path that is not one", cloudtasks.Options{Queue: queuePath, Target: cloudtasks.AppEngine{Path: "internal/tasks"}, Now: now}, "path"},
		{"an HTTP target without a URL", cloudtasks.Options{Queue: queuePath, Target: cloudtasks.HTTP{ServiceAccount: account}, Now: now}, "url"},
		{"an HTTP target without a service account", cloudtasks.Options{Queue: queuePath, Target: cloudtasks.HTTP{URL: audience}, Now: now}, "service account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := cloudtasks.New(client, tt.opts); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
