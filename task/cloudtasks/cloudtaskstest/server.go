// Package cloudtaskstest is a Cloud Tasks server for tests: the gRPC calls
// task/cloudtasks makes (CreateTask, GetTask, DeleteTask) and those
// gcpsetup makes (GetQueue, CreateQueue, UpdateQueue), served on
// loopback with Cloud Tasks' rules (task ids, refusal of a name used
// recently, the 30-day limit on schedule times), and delivery of the tasks
// as real HTTP requests with the headers Cloud Tasks sends, an OIDC token
// signed by a test Issuer for HTTP targets, and retries with backoff on
// anything but 2xx. Google ships no Cloud Tasks emulator; this is the
// smallest honest stand-in.
//
// Time is the injected Options.Now: a test on a fake clock steps delivery
// with DeliverDue; a test in real time (Now = time.Now) calls Run, which
// delivers each task at its schedule time.
package cloudtaskstest

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	gcloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"github.com/sundial-cron/sundial/internal/standin"
	"github.com/sundial-cron/sundial/task/cloudtasks"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Options configure a Server.
type Options struct {
	// Now is the server's clock: schedule times, backoff and the expiry
	// of names are measured on it. Required.
	Now func() time.Time
	// AppEngineURL is the app's base URL that App Engine targets'
	// relative URIs are delivered to. Required to create App Engine tasks.
	AppEngineURL string
	// Issuer signs the OIDC tokens of HTTP targets. Required to create
	// tasks with an OIDC token.
	Issuer *Issuer
	// Retry applies to every queue. Zero: cloudtasks.DefaultRetry.
	Retry cloudtasks.Retry
	// Dedup is how long the name of a task that was delivered, deleted or
	// lost is refused: about an hour for queues made with the Cloud Tasks
	// API (up to 9 days for queue.yaml ones). Default 1h.
	Dedup time.Duration
	// Delivered, if set, is called after every dispatch with what
	// happened, so tests can wait on deliveries instead of sleeping.
	Delivered func(Delivery)
	// Client sends the deliveries. Default: a client with the 10-minute
	// dispatch deadline of Cloud Tasks, on a transport of its own.
	Client *http.Client
}

// Delivery is one dispatch of a task.
type Delivery struct {
	Task    string    // the task's full name
	Body    []byte    // the request body
	Attempt int       // 1 for the first dispatch
	At      time.Time // on the server's clock
	Status  int       // the response's status; 0 if there was none
	Err     error     // why there was no response
}

// OK reports whether the delivery acknowledged the task.
func (d Delivery) OK() bool { return d.Status >= 200 && d.Status < 300 }

// maxScheduleAhead is how far ahead Cloud Tasks accepts a schedule time.
const maxScheduleAhead = 30 * 24 * time.Hour

var (
	queueName = regexp.MustCompile(`^projects/[A-Za-z0-9.:-]+/locations/[A-Za-z0-9-]+/queues/([A-Za-z0-9-]{1,100})$`)
	taskID    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,500}$`)
)

// Server is a running test Cloud Tasks server.
type Server struct {
	cloudtaskspb.UnimplementedCloudTasksServer

	opts Options
	lis  net.Listener
	gs   *grpc.Server
	wake chan struct{}

	mu         sync.Mutex
	tasks      map[string]*entry
	used       map[string]time.Time // names refused until then
	lose       func(*cloudtaskspb.Task) bool
	twice      func(*cloudtaskspb.Task) bool
	deliveries []Delivery
	queues     map[string]*cloudtaskspb.Queue
	queueCalls []string
}

// entry is a task waiting in a queue, with what Cloud Tasks tracks of it.
type entry struct {
	task       *cloudtaskspb.Task
	running    bool
	dispatches int // dispatches so far
	responses  int // dispatches that got a response
	lastStatus int
}

// Start serves a Server on a loopback port until Close.
func Start(opts Options) (*Server, error) {
	if opts.Now == nil {
		return nil, errors.New("cloudtaskstest: Now: missing")
	}
	if opts.Retry == (cloudtasks.Retry{}) {
		opts.Retry = cloudtasks.DefaultRetry
	}
	if opts.Dedup <= 0 {
		opts.Dedup = time.Hour
	}
	if opts.Client == nil {
		// Not on http.DefaultTransport: every httptest.Server's Close
		// closes that one's idle connections, and one taken for a
		// delivery at that moment breaks after the app answered, which
		// the server would take for a failed delivery and repeat. Cloud
		// Tasks' dispatches share nothing with the app's tests.
		opts.Client = &http.Client{Timeout: 10 * time.Minute, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, lis: lis, gs: grpc.NewServer(), wake: make(chan struct{}, 1),
		tasks: map[string]*entry{}, used: map[string]time.Time{}, queues: map[string]*cloudtaskspb.Queue{},
	}
	cloudtaskspb.RegisterCloudTasksServer(s.gs, s)
	go s.gs.Serve(lis) //nolint:errcheck // Serve returns when Close stops it.
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Client returns a Cloud Tasks client connected to the server.
func (s *Server) Client(ctx context.Context) (*gcloudtasks.Client, error) {
	return gcloudtasks.NewClient(ctx, standin.ClientOptions(s.Addr())...)
}

// Close stops the server.
func (s *Server) Close() { s.gs.Stop() }

// Lose makes the server acknowledge the creation of every task lose
// returns true for and then drop it, as if it were purged: it is never
// delivered, and its name stays used. Nil stops losing.
func (s *Server) Lose(lose func(*cloudtaskspb.Task) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose = lose
}

// Twice makes the server dispatch every task twice returns true for two
// times at once, as Cloud Tasks' at-least-once delivery allows. Nil stops
// it.
func (s *Server) Twice(twice func(*cloudtaskspb.Task) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.twice = twice
}

// Deliveries returns every dispatch so far, in the order they ended.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// Pending is the number of tasks waiting in the queues.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}

// CreateTask implements the Cloud Tasks call.
func (s *Server) CreateTask(_ context.Context, req *cloudtaskspb.CreateTaskRequest) (*cloudtaskspb.Task, error) {
	if !queueName.MatchString(req.GetParent()) {
		return nil, status.Errorf(codes.InvalidArgument, "parent %q: want projects/PROJECT/locations/LOCATION/queues/QUEUE", req.GetParent())
	}
	if req.GetTask() == nil {
		return nil, status.Error(codes.InvalidArgument, "task: missing")
	}
	t := proto.Clone(req.GetTask()).(*cloudtaskspb.Task)
	if t.Name == "" {
		t.Name = req.GetParent() + "/tasks/" + rand.Text()
	}
	id, ok := strings.CutPrefix(t.Name, req.GetParent()+"/tasks/")
	if !ok || !taskID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "task name %q: want %s/tasks/ID with an ID of letters, digits, - and _, at most 500", t.Name, req.GetParent())
	}
	if err := s.checkTarget(t); err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	for name, until := range s.used {
		if !now.Before(until) {
			delete(s.used, name)
		}
	}
	if _, ok := s.tasks[t.Name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "task %s already exists", t.Name)
	}
	if _, ok := s.used[t.Name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "task %s was used recently", t.Name)
	}
	if t.ScheduleTime == nil {
		t.ScheduleTime = timestamppb.New(now)
	}
	if t.ScheduleTime.AsTime().After(now.Add(maxScheduleAhead)) {
		return nil, status.Errorf(codes.InvalidArgument, "schedule time %s is more than 30 days ahead", t.ScheduleTime.AsTime().Format(time.RFC3339))
	}
	t.CreateTime = timestamppb.New(now)
	if s.lose != nil && s.lose(proto.Clone(t).(*cloudtaskspb.Task)) {
		s.used[t.Name] = now.Add(s.opts.Dedup)
		return t, nil
	}
	s.tasks[t.Name] = &entry{task: t}
	s.poke()
	return proto.Clone(t).(*cloudtaskspb.Task), nil
}

// checkTarget refuses tasks this server could not deliver.
func (s *Server) checkTarget(t *cloudtaskspb.Task) error {
	switch {
	case t.GetAppEngineHttpRequest() != nil:
		if s.opts.AppEngineURL == "" {
			return status.Error(codes.FailedPrecondition, "cloudtaskstest: App Engine task, but Options.AppEngineURL is not set")
		}
	case t.GetHttpRequest() != nil:
		r := t.GetHttpRequest()
		if !strings.HasPrefix(r.GetUrl(), "http://") && !strings.HasPrefix(r.GetUrl(), "https://") {
			return status.Errorf(codes.InvalidArgument, "http request url %q: want an absolute http(s) URL", r.GetUrl())
		}
		if r.GetOidcToken() != nil && s.opts.Issuer == nil {
			return status.Error(codes.FailedPrecondition, "cloudtaskstest: OIDC token asked for, but Options.Issuer is not set")
		}
	default:
		return status.Error(codes.InvalidArgument, "task: no app_engine_http_request or http_request")
	}
	return nil
}

// GetTask implements the Cloud Tasks call.
func (s *Server) GetTask(_ context.Context, req *cloudtaskspb.GetTaskRequest) (*cloudtaskspb.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.tasks[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "task %s not found", req.GetName())
	}
	t := proto.Clone(e.task).(*cloudtaskspb.Task)
	t.DispatchCount, t.ResponseCount = int32(e.dispatches), int32(e.responses)
	return t, nil
}

// DeleteTask implements the Cloud Tasks call.
func (s *Server) DeleteTask(_ context.Context, req *cloudtaskspb.DeleteTaskRequest) (*emptypb.Empty, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[req.GetName()]; !ok {
		return nil, status.Errorf(codes.NotFound, "task %s not found", req.GetName())
	}
	s.remove(req.GetName(), s.opts.Now())
	return &emptypb.Empty{}, nil
}

// remove ends a task; its name stays used for Dedup. s.mu is held.
func (s *Server) remove(name string, now time.Time) {
	delete(s.tasks, name)
	s.used[name] = now.Add(s.opts.Dedup)
}

// poke wakes Run.
func (s *Server) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
