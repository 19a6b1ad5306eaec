package cloudtaskstest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path"
	"strconv"
	"sync"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// dispatch is one dispatch of a task, taken from its entry under s.mu.
type dispatch struct {
	task       *cloudtaskspb.Task
	attempt    int
	responses  int
	lastStatus int
	twice      bool
}

// DeliverDue dispatches every task due on the server's clock, at once,
// waits for the responses, and repeats until nothing is due (the handlers
// may create tasks due now). It returns the number of dispatches. A
// failed task is scheduled again after its backoff, which is in the
// future, so DeliverDue delivers it only once the clock has moved.
func (s *Server) DeliverDue(ctx context.Context) int {
	n := 0
	for {
		due := s.due(s.opts.Now())
		if len(due) == 0 {
			return n
		}
		var wg sync.WaitGroup
		for _, d := range due {
			wg.Go(func() { s.deliver(ctx, d) })
		}
		wg.Wait()
		n += len(due)
	}
}

// Run dispatches each task when it falls due, until ctx is done; then it
// waits for the dispatches under way. Use it with a real-time clock.
func (s *Server) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := s.opts.Now()
		for _, d := range s.due(now) {
			wg.Go(func() {
				s.deliver(ctx, d)
				s.poke()
			})
		}
		wait := time.Hour
		if next, ok := s.next(); ok {
			wait = next.Sub(now)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// due takes the tasks due at now that are not being dispatched.
func (s *Server) due(now time.Time) []dispatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []dispatch
	for _, e := range s.tasks {
		if e.running || e.task.ScheduleTime.AsTime().After(now) {
			continue
		}
		e.running = true
		e.dispatches++
		out = append(out, dispatch{
			task: proto.Clone(e.task).(*cloudtaskspb.Task), attempt: e.dispatches,
			responses: e.responses, lastStatus: e.lastStatus,
			twice: s.twice != nil && s.twice(proto.Clone(e.task).(*cloudtaskspb.Task)),
		})
	}
	return out
}

// next is the earliest schedule time of a task not being dispatched.
func (s *Server) next() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	found := false
	for _, e := range s.tasks {
		if at := e.task.ScheduleTime.AsTime(); !e.running && (!found || at.Before(next)) {
			next, found = at, true
		}
	}
	return next, found
}

// deliver sends d (twice at once if asked) and records the outcome: a 2xx
// from either ends the task; otherwise it is retried after the backoff
// unless it has had all its attempts.
func (s *Server) deliver(ctx context.Context, d dispatch) {
	sends := 1
	if d.twice {
		sends = 2
	}
	results := make([]Delivery, sends)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = s.send(ctx, d) })
	}
	wg.Wait()

	s.mu.Lock()
	now := s.opts.Now()
	e := s.tasks[d.task.Name]
	ok := false
	for _, r := range results {
		ok = ok || r.OK()
		if r.Status != 0 && e != nil {
			e.responses++
			e.lastStatus = r.Status
		}
	}
	s.deliveries = append(s.deliveries, results...)
	switch {
	case e == nil:
		// Deleted while it was being dispatched.
	case ok || (s.opts.Retry.MaxAttempts > 0 && e.dispatches >= s.opts.Retry.MaxAttempts):
		s.remove(d.task.Name, now)
	default:
		e.running = false
		e.task.ScheduleTime = timestamppb.New(now.Add(s.opts.Retry.Backoff(e.dispatches)))
	}
	hook := s.opts.Delivered
	s.mu.Unlock()
	if hook != nil {
		for _, r := range results {
			hook(r)
		}
	}
}

// send makes one HTTP request for d, with the headers Cloud Tasks sends.
func (s *Server) send(ctx context.Context, d dispatch) Delivery {
	out := Delivery{Task: d.task.Name, Attempt: d.attempt, At: s.opts.Now()}
	req, err := s.request(ctx, d)
	if err != nil {
		out.Err = err
		return out
	}
	out.Body = d.task.GetAppEngineHttpRequest().GetBody()
	if hr := d.task.GetHttpRequest(); hr != nil {
		out.Body = hr.GetBody()
	}
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		out.Err = err
		return out
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // draining for reuse; the status is what counts.
	resp.Body.Close()
	out.Status = resp.StatusCode
	return out
}

func (s *Server) request(ctx context.Context, d dispatch) (*http.Request, error) {
	queue := path.Dir(path.Dir(d.task.Name))
	h := http.Header{}
	var (
		method, url, prefix string
		body                []byte
	)
	if ae := d.task.GetAppEngineHttpRequest(); ae != nil {
		uri := ae.GetRelativeUri()
		if uri == "" {
			uri = "/"
		}
		method, url, body, prefix = methodOf(ae.GetHttpMethod()), s.opts.AppEngineURL+uri, ae.GetBody(), "X-AppEngine-"
		setAll(h, ae.GetHeaders())
		h.Set("User-Agent", "AppEngine-Google; (+http://code.google.com/appengine)")
	} else {
		hr := d.task.GetHttpRequest()
		method, url, body, prefix = methodOf(hr.GetHttpMethod()), hr.GetUrl(), hr.GetBody(), "X-CloudTasks-"
		setAll(h, hr.GetHeaders())
		h.Set("User-Agent", "Google-Cloud-Tasks")
		if tok := hr.GetOidcToken(); tok != nil {
			aud := tok.GetAudience()
			if aud == "" {
				aud = hr.GetUrl()
			}
			h.Set("Authorization", "Bearer "+s.opts.Issuer.Token(tok.GetServiceAccountEmail(), aud, s.opts.Now()))
		}
	}
	eta := d.task.ScheduleTime.AsTime()
	h.Set(prefix+"QueueName", path.Base(queue))
	h.Set(prefix+"TaskName", path.Base(d.task.Name))
	h.Set(prefix+"TaskRetryCount", strconv.Itoa(d.attempt-1))
	h.Set(prefix+"TaskExecutionCount", strconv.Itoa(d.responses))
	h.Set(prefix+"TaskETA", strconv.FormatFloat(float64(eta.UnixMicro())/1e6, 'f', 6, 64))
	if d.attempt > 1 && d.lastStatus != 0 {
		h.Set(prefix+"TaskPreviousResponse", strconv.Itoa(d.lastStatus))
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	return req, nil
}

func setAll(h http.Header, m map[string]string) {
	for k, v := range m {
		h.Set(k, v)
	}
}

func methodOf(m cloudtaskspb.HttpMethod) string {
	if m == cloudtaskspb.HttpMethod_HTTP_METHOD_UNSPECIFIED {
		return http.MethodPost
	}
	return m.String()
}
