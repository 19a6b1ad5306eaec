package cloudtasks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	gax "github.com/googleapis/gax-go/v2"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/cloudtasks"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
)

const queuePath = "projects/proj/locations/us-central1/queues/sundial"

// rig is a Queue on the test Cloud Tasks server, delivering to the task
// endpoint of an app served on loopback, all on a fake clock at t0.
type rig struct {
	clock *fakeclock.Clock
	srv   *cloudtaskstest.Server
	api   interface {
		GetTask(context.Context, *cloudtaskspb.GetTaskRequest, ...gax.CallOption) (*cloudtaskspb.Task, error)
	}
	queue *cloudtasks.Queue
	rec   *recorder
}

type target string

const (
	appEngine target = "App Engine"
	cloudRun  target = "Cloud Run"
)

func newRig(t *testing.T, tg target, retry cloudtaskstest.Retry, answer func(n int) error) *rig {
	t.Helper()
	ctx := t.Context()
	clock := fakeclock.New(t0)
	rec := &recorder{err: answer}
	mux := http.NewServeMux()
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)

	opts := cloudtaskstest.Options{Now: clock.Now, Retry: retry}
	var (
		gate   cloudtasks.Gate
		target cloudtasks.Target
	)
	switch tg {
	case appEngine:
		gate, target = cloudtasks.AppEngineQueue("sundial"), cloudtasks.AppEngine{Path: "/internal/tasks"}
		opts.AppEngineURL = app.URL
	case cloudRun:
		is := newIssuer(t)
		gate = newOIDC(t, is, clock.Now)
		target = cloudtasks.HTTP{URL: app.URL + "/internal/tasks", ServiceAccount: account, Audience: audience}
		opts.Issuer = is
	}
	mux.Handle("/internal/tasks", &cloudtasks.Endpoint{Gate: gate, Handler: rec.handle, Logger: quiet})

	srv, err := cloudtaskstest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client, err := srv.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	q, err := cloudtasks.New(client, cloudtasks.Options{Queue: queuePath, Target: target, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{clock: clock, srv: srv, api: client, queue: q, rec: rec}
}

func (r *rig) post(t *testing.T, tasks ...task.Task) {
	t.Helper()
	if err := r.queue.Posted(t.Context(), tasks); err != nil {
		t.Fatalf("Posted: %v", err)
	}
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

func sameTasks(t *testing.T, got, want []task.Task) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("handler got %v, want %v", got, want)
	}
	for i := range got {
		g := got[i]
		if !g.ETA.Equal(want[i].ETA) {
			t.Errorf("task %d: ETA %v, want %v", i, g.ETA, want[i].ETA)
		}
		g.ETA = want[i].ETA
		if g != want[i] {
			t.Errorf("task %d: %v, want %v", i, g, want[i])
		}
	}
}

var (
	tick  = task.Task{Kind: task.TickLater, JobID: "proj/job", Nonce: 11, ETA: t0}
	start = task.Task{Kind: task.StartInvocation, JobID: "proj/job", Nonce: 12, ETA: t0, Invocation: "inv-1", Attempt: 1}
)

func TestQueueDeliversDecodedTasksToTheHandler(t *testing.T) {
	t.Parallel()
	for _, tg := range []target{appEngine, cloudRun} {
		t.Run(string(tg), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tg, cloudtaskstest.DefaultRetry, nil)
			r.post(t, tick)
			if n := r.srv.DeliverDue(t.Context()); n != 1 {
				t.Fatalf("DeliverDue = %d, want 1", n)
			}
			r.post(t, start)
			r.srv.DeliverDue(t.Context())
			sameTasks(t, r.rec.got(), []task.Task{tick, start})
			if p := r.srv.Pending(); p != 0 {
				t.Errorf("%d tasks still pending after they were acknowledged", p)
			}
		})
	}
}

func TestQueueTreatsARepeatPostAsDone(t *testing.T) {
	t.Parallel()
	r := newRig(t, cloudRun, cloudtaskstest.DefaultRetry, nil)
	r.post(t, tick)
	r.post(t, tick) // the same task again: AlreadyExists, which is success
	if p := r.srv.Pending(); p != 1 {
		t.Fatalf("%d tasks pending after posting one twice, want 1", p)
	}
	r.srv.DeliverDue(t.Context())
	r.post(t, tick) // after delivery: the name was used recently
	r.srv.DeliverDue(t.Context())
	sameTasks(t, r.rec.got(), []task.Task{tick})
}

func TestQueueRespectsETAs(t *testing.T) {
	t.Parallel()
	r := newRig(t, appEngine, cloudtaskstest.DefaultRetry, nil)
	later := tick
	later.ETA = t0.Add(10 * time.Minute)
	r.post(t, later)
	if got := r.scheduled(t, later); !got.Equal(later.ETA) {
		t.Errorf("scheduled at %v, want the ETA %v", got, later.ETA)
	}
	steps := []struct {
		advance time.Duration
		want    int
	}{{0, 0}, {10*time.Minute - time.Second, 0}, {time.Second, 1}}
	for _, s := range steps {
		r.clock.Advance(s.advance)
		if n := r.srv.DeliverDue(t.Context()); n != s.want {
			t.Fatalf("at %v: DeliverDue = %d, want %d", r.clock.Now(), n, s.want)
		}
	}
	sameTasks(t, r.rec.got(), []task.Task{later})
}

func TestQueueFailuresAreRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	retry := cloudtaskstest.Retry{MinBackoff: 10 * time.Second, MaxBackoff: 300 * time.Second, MaxDoublings: 3}
	r := newRig(t, cloudRun, retry, func(n int) error {
		if n <= 3 {
			return context.DeadlineExceeded
		}
		return nil
	})
	r.post(t, tick)
	// Deliveries at t0, then after 10s, 20s and 40s of backoff; nothing
	// comes a second early.
	for _, wait := range []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second} {
		if wait > 0 {
			r.clock.Advance(wait - time.Second)
			if n := r.srv.DeliverDue(t.Context()); n != 0 {
				t.Fatalf("at %v: %d deliveries before the backoff ended", r.clock.Now(), n)
			}
			r.clock.Advance(time.Second)
		}
		if n := r.srv.DeliverDue(t.Context()); n != 1 {
			t.Fatalf("at %v: DeliverDue = %d, want 1", r.clock.Now(), n)
		}
	}
	var statuses []int
	for _, d := range r.srv.Deliveries() {
		statuses = append(statuses, d.Status)
	}
	if want := []int{500, 500, 500, 204}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	if p := r.srv.Pending(); p != 0 {
		t.Errorf("%d tasks pending after the retry succeeded", p)
	}
}

func TestQueueFarETAs(t *testing.T) {
	t.Parallel()
	r := newRig(t, appEngine, cloudtaskstest.DefaultRetry, nil)
	farTick, farStart := tick, start
	farTick.ETA = t0.Add(40 * 24 * time.Hour)
	farStart.ETA = farTick.ETA
	err := r.queue.Posted(t.Context(), []task.Task{farStart, farTick})
	if err == nil || !strings.Contains(err.Error(), farStart.String()) || strings.Contains(err.Error(), farTick.String()) {
		t.Fatalf("Posted = %v, want an error naming only the start beyond 30 days", err)
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
