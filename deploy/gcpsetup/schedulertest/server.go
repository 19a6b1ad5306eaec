// Package schedulertest is a Cloud Scheduler server for tests: the gRPC
// calls gcpsetup makes (GetJob, CreateJob, UpdateJob), and PauseJob to
// pause a job as someone might by hand, served on loopback with Cloud
// Scheduler's rules (job names under their location, refusal of a name in
// use, the update mask honoured, HTTP targets' attempt deadline between
// 15 s and 30 min, a unix-cron schedule and a tz database zone).
// It keeps jobs; it never runs them. Google ships no Cloud Scheduler
// emulator; this is the smallest honest stand-in.
package schedulertest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // jobs name IANA zones; do not depend on the host's copy

	scheduler "cloud.google.com/go/scheduler/apiv1"
	"cloud.google.com/go/scheduler/apiv1/schedulerpb"
	"github.com/robfig/cron/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sundial-cron/sundial/internal/fieldmask"
	"github.com/sundial-cron/sundial/internal/standin"
)

var (
	location = regexp.MustCompile(`^projects/[A-Za-z0-9.:-]+/locations/[A-Za-z0-9-]+$`)
	jobID    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,500}$`)
)

// defaultDeadline is the attempt deadline Cloud Scheduler gives an HTTP
// job that sets none.
const defaultDeadline = 3 * time.Minute

// Server is a running test Cloud Scheduler server.
type Server struct {
	schedulerpb.UnimplementedCloudSchedulerServer

	now func() time.Time
	lis net.Listener
	gs  *grpc.Server

	mu     sync.Mutex
	jobs   map[string]*schedulerpb.Job
	writes []string
}

// Start serves a Server on a loopback port until Close. now stamps the
// jobs' user_update_time.
func Start(now func() time.Time) (*Server, error) {
	if now == nil {
		return nil, errors.New("schedulertest: now: missing")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{now: now, lis: lis, gs: grpc.NewServer(), jobs: map[string]*schedulerpb.Job{}}
	schedulerpb.RegisterCloudSchedulerServer(s.gs, s)
	go s.gs.Serve(lis) //nolint:errcheck // Serve returns when Close stops it.
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Client returns a Cloud Scheduler client connected to the server.
func (s *Server) Client(ctx context.Context) (*scheduler.CloudSchedulerClient, error) {
	return scheduler.NewCloudSchedulerClient(ctx, standin.ClientOptions(s.Addr())...)
}

// Close stops the server.
func (s *Server) Close() { s.gs.Stop() }

// Writes lists the writes so far, one per call that changes a job, as
// "CreateJob NAME", "UpdateJob NAME [MASK PATHS]" or "PauseJob NAME".
func (s *Server) Writes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

// GetJob implements the Cloud Scheduler call.
func (s *Server) GetJob(_ context.Context, req *schedulerpb.GetJobRequest) (*schedulerpb.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetName())
	}
	return proto.Clone(j).(*schedulerpb.Job), nil
}

// CreateJob implements the Cloud Scheduler call: a job without a name is
// given one, a name in use is AlreadyExists, and a new job is ENABLED.
func (s *Server) CreateJob(_ context.Context, req *schedulerpb.CreateJobRequest) (*schedulerpb.Job, error) {
	if !location.MatchString(req.GetParent()) {
		return nil, status.Errorf(codes.InvalidArgument, "parent %q: want projects/PROJECT/locations/LOCATION", req.GetParent())
	}
	if req.GetJob() == nil {
		return nil, status.Error(codes.InvalidArgument, "job: missing")
	}
	j := proto.Clone(req.GetJob()).(*schedulerpb.Job)
	if j.Name == "" {
		j.Name = req.GetParent() + "/jobs/" + rand.Text()
	}
	if id, ok := strings.CutPrefix(j.Name, req.GetParent()+"/jobs/"); !ok || !jobID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "job name %q: want %s/jobs/ID with an ID of letters, digits, - and _, at most 500", j.Name, req.GetParent())
	}
	clearOutputOnly(j)
	if h := j.GetHttpTarget(); h != nil {
		if h.HttpMethod == schedulerpb.HttpMethod_HTTP_METHOD_UNSPECIFIED {
			h.HttpMethod = schedulerpb.HttpMethod_POST
		}
		if j.AttemptDeadline == nil {
			j.AttemptDeadline = durationpb.New(defaultDeadline)
		}
	}
	if err := checkJob(j); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[j.Name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "job %s already exists", j.Name)
	}
	j.State, j.UserUpdateTime = schedulerpb.Job_ENABLED, timestamppb.New(s.now())
	s.jobs[j.Name] = j
	s.writes = append(s.writes, "CreateJob "+j.Name)
	return proto.Clone(j).(*schedulerpb.Job), nil
}

// UpdateJob implements the Cloud Scheduler call: it changes the fields
// the update mask names (all of them if it is empty) of a job that
// exists, and never its output-only fields.
func (s *Server) UpdateJob(_ context.Context, req *schedulerpb.UpdateJobRequest) (*schedulerpb.Job, error) {
	in := req.GetJob()
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.jobs[in.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", in.GetName())
	}
	j := proto.Clone(old).(*schedulerpb.Job)
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		j = proto.Clone(in).(*schedulerpb.Job)
	} else if err := fieldmask.Apply(j, in, paths); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	clearOutputOnly(j)
	if err := checkJob(j); err != nil {
		return nil, err
	}
	j.State, j.UserUpdateTime = old.State, timestamppb.New(s.now())
	s.jobs[j.Name] = j
	s.writes = append(s.writes, fmt.Sprintf("UpdateJob %s %v", j.Name, paths))
	return proto.Clone(j).(*schedulerpb.Job), nil
}

// PauseJob implements the Cloud Scheduler call: the job stays, PAUSED.
func (s *Server) PauseJob(_ context.Context, req *schedulerpb.PauseJobRequest) (*schedulerpb.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "job %s not found", req.GetName())
	}
	j.State = schedulerpb.Job_PAUSED
	s.writes = append(s.writes, "PauseJob "+j.Name)
	return proto.Clone(j).(*schedulerpb.Job), nil
}

// clearOutputOnly drops what a caller may send but not set.
func clearOutputOnly(j *schedulerpb.Job) {
	j.State, j.Status, j.UserUpdateTime, j.ScheduleTime, j.LastAttemptTime = schedulerpb.Job_STATE_UNSPECIFIED, nil, nil, nil, nil
}

// checkJob refuses the jobs Cloud Scheduler refuses.
func checkJob(j *schedulerpb.Job) error {
	if _, err := cron.ParseStandard(j.GetSchedule()); err != nil || j.GetSchedule() == "" {
		return status.Errorf(codes.InvalidArgument, "schedule %q: want a unix-cron schedule", j.GetSchedule())
	}
	if _, err := time.LoadLocation(j.GetTimeZone()); err != nil {
		return status.Errorf(codes.InvalidArgument, "time_zone %q: not in the tz database", j.GetTimeZone())
	}
	h := j.GetHttpTarget()
	if h == nil {
		if j.GetAppEngineHttpTarget() == nil && j.GetPubsubTarget() == nil {
			return status.Error(codes.InvalidArgument, "job: no target")
		}
		return nil
	}
	if !strings.HasPrefix(h.GetUri(), "http://") && !strings.HasPrefix(h.GetUri(), "https://") {
		return status.Errorf(codes.InvalidArgument, "http_target.uri %q: want an absolute http(s) URL", h.GetUri())
	}
	if t := h.GetOidcToken(); t != nil && t.GetServiceAccountEmail() == "" {
		return status.Error(codes.InvalidArgument, "http_target.oidc_token.service_account_email: missing")
	}
	if d := j.GetAttemptDeadline().AsDuration(); d < 15*time.Second || d > 30*time.Minute {
		return status.Errorf(codes.InvalidArgument, "attempt_deadline %s: want 15s to 30m for an HTTP target", d)
	}
	return nil
}
