package cloudtaskstest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/task/cloudtasks"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
)

var t0 = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

const queue = "projects/proj/locations/us-central1/queues/sundial"

// seen is what the app received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []string
}

func (s *seen) all() ([]*http.Request, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...), append([]string(nil), s.body...)
}

// fixture is a server on a fake clock delivering to an app that answers
// status(r) to each request r.
type fixture struct {
	clock  *fakeclock.Clock
	srv    *cloudtaskstest.Server
	app    *httptest.Server
	seen   *seen
	issuer *cloudtaskstest.Issuer
	create func(t *testing.T, task *cloudtaskspb.Task) (*cloudtaskspb.Task, error)
	api    apiClient
}

type apiClient interface {
	GetTask(context.Context, *cloudtaskspb.GetTaskRequest, ...gax.CallOption) (*cloudtaskspb.Task, error)
}

func newFixture(t *testing.T, opts cloudtaskstest.Options, status func(r *http.Request) int) *fixture {
	t.Helper()
	f := &fixture{clock: fakeclock.New(t0), seen: &seen{}}
	f.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.seen.mu.Lock()
		f.seen.reqs = append(f.seen.reqs, r)
		f.seen.body = append(f.seen.body, string(body))
		f.seen.mu.Unlock()
		code := http.StatusOK
		if status != nil {
			code = status(r)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(f.app.Close)
	is, err := cloudtaskstest.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(is.Close)
	f.issuer = is
	if opts.Now == nil {
		opts.Now = f.clock.Now
	}
	opts.AppEngineURL, opts.Issuer = f.app.URL, is
	f.srv, err = cloudtaskstest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.srv.Close)
	client, err := f.srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	f.api = client
	f.create = func(t *testing.T, task *cloudtaskspb.Task) (*cloudtaskspb.Task, error) {
		return client.CreateTask(t.Context(), &cloudtaskspb.CreateTaskRequest{Parent: queue, Task: task})
	}
	return f
}

func httpTask(id, url string, body string) *cloudtaskspb.Task {
	return &cloudtaskspb.Task{
		Name: queue + "/tasks/" + id,
		MessageType: &cloudtaskspb.Task_HttpRequest{HttpRequest: &cloudtaskspb.HttpRequest{
			Url: url, HttpMethod: cloudtaskspb.HttpMethod_POST, Body: []byte(body),
			AuthorizationHeader: &cloudtaskspb.HttpRequest_OidcToken{OidcToken: &cloudtaskspb.OidcToken{
				ServiceAccountEmail: "tasks@proj.iam.gserviceaccount.com", Audience: "https://aud.example.com",
			}},
		}},
	}
}

// appEngineTask is a task to /internal/tasks named id (empty: no name).
func appEngineTask(id, body string) *cloudtaskspb.Task {
	t := &cloudtaskspb.Task{
		MessageType: &cloudtaskspb.Task_AppEngineHttpRequest{AppEngineHttpRequest: &cloudtaskspb.AppEngineHttpRequest{
			RelativeUri: "/internal/tasks", Body: []byte(body),
		}},
	}
	if id != "" {
		t.Name = queue + "/tasks/" + id
	}
	return t
}

func TestDeliverySendsCloudTasksHeaders(t *testing.T) {
	t.Parallel()
	// The first dispatch of each task fails, the retry succeeds.
	failed := map[string]bool{}
	var mu sync.Mutex
	f := newFixture(t, cloudtaskstest.Options{Retry: cloudtasks.Retry{MinBackoff: time.Second, MaxBackoff: time.Second}}, func(r *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		name := r.Header.Get("X-CloudTasks-TaskName") + r.Header.Get("X-AppEngine-TaskName")
		if !failed[name] {
			failed[name] = true
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	if _, err := f.create(t, httpTask("h1", f.app.URL+"/run", "payload-h")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.create(t, appEngineTask("a1", "payload-a")); err != nil {
		t.Fatal(err)
	}
	first := f.srv.DeliverDue(t.Context())
	f.clock.Advance(time.Second)
	if n := first + f.srv.DeliverDue(t.Context()); n != 4 {
		t.Fatalf("%d dispatches, want 4", n)
	}
	reqs, bodies := f.seen.all()
	for i, r := range reqs {
		prefix, name := "X-CloudTasks-", "h1"
		if r.URL.Path == "/internal/tasks" {
			prefix, name = "X-AppEngine-", "a1"
		}
		retry := "0"
		at := t0
		if i >= 2 {
			retry, at = "1", t0.Add(time.Second)
		}
		want := map[string]string{
			prefix + "QueueName":          "sundial",
			prefix + "TaskName":           name,
			prefix + "TaskRetryCount":     retry,
			prefix + "TaskExecutionCount": retry, // every earlier dispatch got an answer
		}
		for k, v := range want {
			if got := r.Header.Get(k); got != v {
				t.Errorf("request %d (%s): %s = %q, want %q", i, name, k, got, v)
			}
		}
		if got, err := strconv.ParseFloat(r.Header.Get(prefix+"TaskETA"), 64); err != nil || got != float64(at.Unix()) {
			t.Errorf("request %d (%s): %sTaskETA = %q, want %d (seconds since the epoch)", i, name, prefix, r.Header.Get(prefix+"TaskETA"), at.Unix())
		}
		if retry == "1" && r.Header.Get(prefix+"TaskPreviousResponse") != "503" {
			t.Errorf("request %d (%s): %sTaskPreviousResponse = %q, want 503", i, name, prefix, r.Header.Get(prefix+"TaskPreviousResponse"))
		}
		if r.Method != "POST" || !strings.HasPrefix(bodies[i], "payload-") {
			t.Errorf("request %d: %s with body %q, want a POST of the task's body", i, r.Method, bodies[i])
		}
		auth := r.Header.Get("Authorization")
		if name == "h1" && !strings.HasPrefix(auth, "Bearer ey") {
			t.Errorf("HTTP target request %d: Authorization %q, want an OIDC bearer token", i, auth)
		}
		if name == "a1" && auth != "" {
			t.Errorf("App Engine request %d has Authorization %q", i, auth)
		}
	}
}

func TestCreateTaskFollowsCloudTasksRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t, cloudtaskstest.Options{Dedup: time.Hour}, nil)
	body := "x"
	tooFar := appEngineTask("far", body)
	tooFar.ScheduleTime = timestamppb.New(t0.Add(31 * 24 * time.Hour))
	tests := []struct {
		name string
		task *cloudtaskspb.Task
		want codes.Code
	}{
		{"a task with a valid id is created", appEngineTask("job-1_tick", body), codes.OK},
		{"the same name again is refused as a duplicate", appEngineTask("job-1_tick", body), codes.AlreadyExists},
		{"an id with a slash is refused", appEngineTask("job/1", body), codes.InvalidArgument},
		{"an id longer than 500 characters is refused", appEngineTask(strings.Repeat("x", 501), body), codes.InvalidArgument},
		{"a task in another queue's name space is refused", &cloudtaskspb.Task{Name: queue + "-other/tasks/x", MessageType: appEngineTask("x", body).MessageType}, codes.InvalidArgument},
		{"a schedule time more than 30 days ahead is refused", tooFar, codes.InvalidArgument},
		{"a task without a request is refused", &cloudtaskspb.Task{Name: queue + "/tasks/empty"}, codes.InvalidArgument},
		{"a task without a name gets one", appEngineTask("", body), codes.OK},
	}
	for _, tt := range tests {
		// In order: the duplicate needs the first create.
		_, err := f.create(t, tt.task)
		if got := status.Code(err); got != tt.want {
			t.Errorf("%s: CreateTask = %v, want code %v", tt.name, err, tt.want)
		}
	}
}

func TestNamesStayUsedAfterTheTaskEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, cloudtaskstest.Options{Dedup: time.Hour}, nil)
	name := queue + "/tasks/done"
	if _, err := f.create(t, appEngineTask("done", "x")); err != nil {
		t.Fatal(err)
	}
	if n := f.srv.DeliverDue(t.Context()); n != 1 {
		t.Fatalf("DeliverDue = %d, want 1", n)
	}
	if _, err := f.api.GetTask(t.Context(), &cloudtaskspb.GetTaskRequest{Name: name}); status.Code(err) != codes.NotFound {
		t.Errorf("GetTask of a delivered task = %v, want NotFound", err)
	}
	if _, err := f.create(t, appEngineTask("done", "x")); status.Code(err) != codes.AlreadyExists {
		t.Errorf("CreateTask of a name delivered a moment ago = %v, want AlreadyExists", err)
	}
	f.clock.Advance(time.Hour)
	if _, err := f.create(t, appEngineTask("done", "x")); err != nil {
		t.Errorf("CreateTask of a name used an hour ago = %v, want it created", err)
	}
}

func TestDeleteTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t, cloudtaskstest.Options{}, nil)
	client, err := f.srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	name := queue + "/tasks/gone"
	if _, err := f.create(t, appEngineTask("gone", "x")); err != nil {
		t.Fatal(err)
	}
	if err := client.DeleteTask(t.Context(), &cloudtaskspb.DeleteTaskRequest{Name: name}); err != nil {
		t.Fatalf("DeleteTask = %v", err)
	}
	if err := client.DeleteTask(t.Context(), &cloudtaskspb.DeleteTaskRequest{Name: name}); status.Code(err) != codes.NotFound {
		t.Errorf("DeleteTask of a deleted task = %v, want NotFound", err)
	}
	if _, err := f.create(t, appEngineTask("gone", "x")); status.Code(err) != codes.AlreadyExists {
		t.Errorf("CreateTask of a name just deleted = %v, want AlreadyExists", err)
	}
	if n := f.srv.DeliverDue(t.Context()); n != 0 {
		t.Errorf("a deleted task was dispatched %d times", n)
	}
}

func TestLoseAndTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, cloudtaskstest.Options{}, nil)
	f.srv.Lose(func(t *cloudtaskspb.Task) bool { return strings.HasSuffix(t.Name, "/lost") })
	f.srv.Twice(func(t *cloudtaskspb.Task) bool { return strings.HasSuffix(t.Name, "/twice") })
	for _, id := range []string{"lost", "twice", "once"} {
		if _, err := f.create(t, appEngineTask(id, id)); err != nil {
			t.Fatalf("CreateTask(%s) = %v: a lost task's create must look successful", id, err)
		}
	}
	f.srv.DeliverDue(t.Context())
	_, bodies := f.seen.all()
	count := map[string]int{}
	for _, b := range bodies {
		count[b]++
	}
	if want := map[string]int{"twice": 2, "once": 1}; len(count) != 2 || count["twice"] != 2 || count["once"] != 1 {
		t.Errorf("deliveries per task %v, want %v", count, want)
	}
	if _, err := f.create(t, appEngineTask("lost", "again")); status.Code(err) != codes.AlreadyExists {
		t.Errorf("CreateTask of a lost task's name = %v, want AlreadyExists (Cloud Tasks still knows it)", err)
	}
}

func TestMaxAttemptsEndsATask(t *testing.T) {
	t.Parallel()
	f := newFixture(t, cloudtaskstest.Options{Retry: cloudtasks.Retry{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Second}},
		func(*http.Request) int { return http.StatusInternalServerError })
	if _, err := f.create(t, appEngineTask("doomed", "x")); err != nil {
		t.Fatal(err)
	}
	n := 0
	for range 5 {
		n += f.srv.DeliverDue(t.Context())
		f.clock.Advance(time.Second)
	}
	if n != 2 || f.srv.Pending() != 0 {
		t.Errorf("%d dispatches, %d pending; want 2 and none", n, f.srv.Pending())
	}
}

func TestRunDeliversInRealTime(t *testing.T) {
	t.Parallel()
	delivered := make(chan cloudtaskstest.Delivery, 1)
	f := newFixture(t, cloudtaskstest.Options{Now: time.Now, Delivered: func(d cloudtaskstest.Delivery) { delivered <- d }}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		f.srv.Run(ctx)
		close(done)
	}()
	defer func() {
		cancel()
		<-done
	}()
	eta := time.Now().Add(50 * time.Millisecond)
	tk := appEngineTask("soon", "x")
	tk.ScheduleTime = timestamppb.New(eta)
	if _, err := f.create(t, tk); err != nil {
		t.Fatal(err)
	}
	d := <-delivered
	if !d.OK() || d.At.Before(eta) {
		t.Errorf("delivery %+v: want a 2xx at or after the ETA %v", d, eta)
	}
}
