package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/cloudtasks"
	"github.com/sundial-cron/sundial/web"
)

// quiet drops the logs of refused and failed deliveries, which these
// tests cause on purpose.
var quiet = slog.New(slog.DiscardHandler)

// recorder is a task.Handler that records what it was given and answers
// with err.
type recorder struct {
	mu    sync.Mutex
	tasks []task.Task
	err   func(n int) error // the answer to the n-th call (1-based); nil: success
}

func (r *recorder) handle(_ context.Context, t task.Task) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tasks = append(r.tasks, t)
	if r.err != nil {
		return r.err(len(r.tasks))
	}
	return nil
}

func (r *recorder) got() []task.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]task.Task(nil), r.tasks...)
}

func post(t *testing.T, url string, headers map[string]string, body string) int {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestEndpointRefusesOutsideRequests(t *testing.T) {
	t.Parallel()
	is, forger := newIssuer(t), newIssuer(t)
	tick := `{"kind":"tick","job":"proj/job","nonce":1,"eta":"2026-03-07T12:00:00Z"}`
	expired := is.Token(account, audience, t0.Add(-2*time.Hour))
	tests := []struct {
		name    string
		gate    web.Gate
		headers map[string]string
	}{
		{"App Engine: no queue header", web.AppEngineQueue("sundial"), nil},
		{"App Engine: another queue", web.AppEngineQueue("sundial"), map[string]string{"X-AppEngine-QueueName": "other"}},
		{"App Engine: only the Cloud Tasks header of HTTP targets", web.AppEngineQueue("sundial"), map[string]string{"X-CloudTasks-QueueName": "sundial"}},
		{"Cloud Run: no token", newSignedBy(t, is, func() time.Time { return t0 }), map[string]string{"X-CloudTasks-QueueName": "sundial"}},
		{"Cloud Run: a forged token", newSignedBy(t, is, func() time.Time { return t0 }), map[string]string{"Authorization": "Bearer " + forger.Token(account, audience, t0)}},
		{"Cloud Run: a token for another audience", newSignedBy(t, is, func() time.Time { return t0 }), map[string]string{"Authorization": "Bearer " + is.Token(account, "https://other.example.com", t0)}},
		{"Cloud Run: a token for another account", newSignedBy(t, is, func() time.Time { return t0 }), map[string]string{"Authorization": "Bearer " + is.Token("intruder@proj.iam.gserviceaccount.com", audience, t0)}},
		{"Cloud Run: an expired token", newSignedBy(t, is, func() time.Time { return t0 }), map[string]string{"Authorization": "Bearer " + expired}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			srv := httptest.NewServer(&web.TaskEndpoint{Decode: cloudtasks.Decode, Gate: tt.gate, Handler: rec.handle, Logger: quiet})
			defer srv.Close()
			if got := post(t, srv.URL, tt.headers, tick); got != http.StatusForbidden {
				t.Errorf("status = %d, want 403", got)
			}
			if got := rec.got(); len(got) != 0 {
				t.Errorf("the handler ran %v", got)
			}
		})
	}
}

func TestEndpointDelivers(t *testing.T) {
	t.Parallel()
	tick := `{"kind":"tick","job":"proj/job","nonce":1,"eta":"2026-03-07T12:00:00Z"}`
	inside := map[string]string{"X-AppEngine-QueueName": "sundial"}
	tests := []struct {
		name       string
		method     string
		body       string
		answer     error
		wantStatus int
		wantCalled bool
	}{
		{"a task the handler does is acknowledged", "POST", tick, nil, http.StatusNoContent, true},
		{"a task the handler fails is answered 500, so Cloud Tasks retries it", "POST", tick, errors.New("store unavailable"), http.StatusInternalServerError, true},
		{"a busy project's task is answered 500, not 503, so the queue does not slow down", "POST", tick, engine.ErrBusy, http.StatusInternalServerError, true},
		{"a malformed task is acknowledged and dropped without the handler", "POST", `{"kind":"tick"}`, nil, http.StatusNoContent, false},
		{"a body beyond Cloud Tasks' size limit is dropped without the handler", "POST", `{"job":"` + strings.Repeat("x", 200<<10) + `"}`, nil, http.StatusNoContent, false},
		{"a GET is refused without the handler", "GET", "", nil, http.StatusMethodNotAllowed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := recorder{err: func(int) error { return tt.answer }}
			srv := httptest.NewServer(&web.TaskEndpoint{Decode: cloudtasks.Decode, Gate: web.AppEngineQueue("sundial"), Handler: rec.handle, Logger: quiet})
			defer srv.Close()
			req, err := http.NewRequest(tt.method, srv.URL, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range inside {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			got := rec.got()
			if called := len(got) > 0; called != tt.wantCalled {
				t.Fatalf("handler called with %v, want called %t", got, tt.wantCalled)
			}
			if tt.wantCalled && (got[0].JobID != "proj/job" || got[0].Kind != task.TickLater || got[0].Nonce != 1) {
				t.Errorf("handler got %v, want the decoded tick", got[0])
			}
		})
	}
}
