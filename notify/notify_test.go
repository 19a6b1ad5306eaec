package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/notify"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/targets/urlfetch"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// t0 is where every test's clock starts: a Monday, 10:00 UTC.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// receiver is a real HTTP server on loopback that keeps every POST.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	posts  []post
	status int
}

type post struct {
	key  string
	body map[string]any
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil || req.Method != "POST" || req.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("the receiver got %s %q (%v) with Content-Type %q", req.Method, b, err, req.Header.Get("Content-Type"))
		}
		r.mu.Lock()
		r.posts = append(r.posts, post{req.Header.Get("Sundial-Notification-Key"), body})
		r.mu.Unlock()
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]post(nil), r.posts...)
}

// stack is the embedded shape on a fake clock with webhooks on: the real
// SQLite store, dispatcher, watchdog and engine.
type stack struct {
	t    *testing.T
	ctx  context.Context
	clk  *fakeclock.Clock
	st   *sqlite.Store
	eng  *engine.Engine
	disp *local.Dispatcher
	wd   *watchdog.Watchdog

	mu        sync.Mutex
	delivered []task.Task  // every task the dispatcher handed the engine
	serverLog lockedBuffer // what the engine logs for the operator
}

func newStack(t *testing.T, e urlfetch.Egress, opts notify.Options) *stack {
	t.Helper()
	s := &stack{t: t, ctx: context.Background(), clk: fakeclock.New(t0)}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.st = st
	opts.Client, opts.Check = egress(t, e)
	opts.Now = s.clk.Now
	q := &enginetest.LateQueue{}
	logger := slog.New(slog.NewTextHandler(&s.serverLog, nil))
	s.eng = engine.New(st, q, map[string]targets.Target{"noop": noop.Target{}, "async": async{}}, engine.Options{Now: s.clk.Now, Notifier: notify.New(opts), Logger: logger})
	handle := func(ctx context.Context, t task.Task) error {
		s.mu.Lock()
		s.delivered = append(s.delivered, t)
		s.mu.Unlock()
		return s.eng.HandleTask(ctx, t)
	}
	s.disp = local.New(st, handle, local.Options{Owner: "proc-1", Workers: 2, OrphanAfter: 10 * time.Second, Now: s.clk.Now, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = s.disp
	s.wd = watchdog.New(st, s.eng, watchdog.Options{Now: s.clk.Now})
	return s
}

// egress is the client and the destination check a server gives its
// webhooks: one egress, urlfetch's.
func egress(t *testing.T, e urlfetch.Egress) (*http.Client, func(string) error) {
	t.Helper()
	client, err := urlfetch.NewClient(urlfetch.Options{Egress: e})
	if err != nil {
		t.Fatal(err)
	}
	check, err := urlfetch.NewChecker(urlfetch.Options{Egress: e})
	if err != nil {
		t.Fatal(err)
	}
	return client, check.Check
}

// lockedBuffer is a log destination the engine's workers share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// define defines the job p/flaky, every minute, failing or not, telling r.
func (s *stack) define(r *receiver, fail bool, format string, on ...string) {
	s.t.Helper()
	s.defineTo(r.URL+"/hook/secret-part", fail, format, on...)
}

// defineTo defines p/flaky as define does, telling webhook.
func (s *stack) defineTo(webhook string, fail bool, format string, on ...string) {
	s.t.Helper()
	spec := `{}`
	if fail {
		spec = `{"fail": true}`
	}
	def := engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: json.RawMessage(spec),
		Notify: &engine.Notify{URL: webhook, Format: format, On: on}}
	if err := s.eng.Define(s.ctx, "p/flaky", def); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stack) runUntil(until time.Time) {
	s.t.Helper()
	if err := enginetest.RunUntil(s.ctx, s.clk, s.st, s.disp, s.wd, until); err != nil {
		s.t.Fatal(err)
	}
}

// log is the invocation's log.
func (s *stack) log(id string) string {
	s.t.Helper()
	inv, err := s.st.Invocation(s.ctx, "p/flaky", id)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(inv.Log)
}

var loopback = urlfetch.Egress{Allow: []string{"127.0.0.1"}}

// TestExactlyOneNotificationPerTransition: three failures in a row are one
// failure notification, two successes after them one recovery, and the
// next failure one more; each is recorded in its invocation's log, the
// webhook URL's secret part left out.
func TestExactlyOneNotificationPerTransition(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	s := newStack(t, loopback, notify.Options{})
	s.define(r, true, "", engine.NotifyFailure, engine.NotifyRecovery)
	s.runUntil(t0.Add(3*time.Minute + 30*time.Second))
	s.define(r, false, "", engine.NotifyFailure, engine.NotifyRecovery)
	s.runUntil(t0.Add(5*time.Minute + 30*time.Second))
	s.define(r, true, "", engine.NotifyFailure, engine.NotifyRecovery)
	s.runUntil(t0.Add(7*time.Minute + 30*time.Second))

	posts := r.got()
	want := []struct {
		key, event, invocation string
		failures               float64
	}{
		{"p/flaky/20260302T100100Z/failure", "failure", "20260302T100100Z", 1},
		{"p/flaky/20260302T100400Z/recovery", "recovery", "20260302T100400Z", 3},
		{"p/flaky/20260302T100600Z/failure", "failure", "20260302T100600Z", 1},
	}
	if len(posts) != len(want) {
		t.Fatalf("%d notifications: %v; want %d", len(posts), posts, len(want))
	}
	for i, w := range want {
		p := posts[i]
		if p.key != w.key || p.body["key"] != w.key || p.body["event"] != w.event || p.body["invocation"] != w.invocation ||
			p.body["job"] != "p/flaky" || p.body["failures"] != w.failures {
			t.Errorf("notification %d: %s %v; want %+v", i, p.key, p.body, w)
		}
	}
	if txt := posts[1].body["text"]; txt != "Sundial job p/flaky recovered: invocation 20260302T100400Z succeeded after 3 failed in a row" {
		t.Errorf("the recovery's text: %q", txt)
	}
	host := strings.TrimPrefix(r.URL, "http://")
	log := s.log("20260302T100100Z")
	if !strings.Contains(log, "notify failure: sending to "+host+"\n") || !strings.Contains(log, "notify failure: delivered (HTTP 200)\n") {
		t.Errorf("the failure's log does not record its notification:\n%s", log)
	}
	if strings.Contains(log, "secret-part") {
		t.Errorf("the log holds the webhook's path:\n%s", log)
	}
	if l := s.log("20260302T100200Z"); strings.Contains(l, "notify") {
		t.Errorf("the second failure in a row records a notification:\n%s", l)
	}
}

// TestAnUndeliverableNotificationNeverAffectsTheJob: a webhook answering
// 500, or one the url_fetch egress refuses (loopback not allowed), is recorded as
// not delivered, and the job runs on as it would have.
func TestAnUndeliverableNotificationNeverAffectsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		egress urlfetch.Egress
		want   string
		posts  int
	}{
		{"the webhook fails", http.StatusInternalServerError, loopback, "notify failure: not delivered: the webhook answered HTTP 500\n", 1},
		{"the destination is refused", http.StatusOK, urlfetch.Egress{}, "a loopback address, which this server's allow list (--url-allow) does not name", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReceiver(t, tc.status)
			var results []string
			s := newStack(t, tc.egress, notify.Options{Counted: func(r string) { results = append(results, r) }})
			s.define(r, true, "slack", engine.NotifyFailure)
			s.runUntil(t0.Add(2*time.Minute + 30*time.Second))
			if got := len(r.got()); got != tc.posts {
				t.Errorf("%d posts; want %d", got, tc.posts)
			}
			if log := s.log("20260302T100100Z"); !strings.Contains(log, tc.want) {
				t.Errorf("the log does not say why:\n%s", log)
			}
			if !slices.Equal(results, []string{notify.Failed}) {
				t.Errorf("counted %v; want one failed", results)
			}
			for _, id := range []string{"20260302T100100Z", "20260302T100200Z"} {
				inv, err := s.st.Invocation(s.ctx, "p/flaky", id)
				if err != nil || inv.Status != "FAILED" {
					t.Errorf("invocation %s: %v %v; want it to have run and FAILED", id, inv, err)
				}
			}
		})
	}
}

// TestNotificationsAreRateLimitedPerJob: past the limit a transition is
// recorded as not sent, and nothing is posted.
func TestNotificationsAreRateLimitedPerJob(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	var results []string
	s := newStack(t, loopback, notify.Options{PerJob: 1, Counted: func(r string) { results = append(results, r) }})
	s.define(r, true, "google_chat", engine.NotifyFailure, engine.NotifyRecovery)
	s.runUntil(t0.Add(90 * time.Second))
	s.define(r, false, "google_chat", engine.NotifyFailure, engine.NotifyRecovery)
	s.runUntil(t0.Add(150 * time.Second))
	posts := r.got()
	if len(posts) != 1 || !strings.HasPrefix(posts[0].body["text"].(string), "Sundial job p/flaky failed (invocation 20260302T100100Z)") || len(posts[0].body) != 1 {
		t.Fatalf("posts %v; want the failure alone, as {\"text\": ...}", posts)
	}
	if log := s.log("20260302T100200Z"); !strings.Contains(log, "notify recovery: not delivered: not sent: rate limited (at most 1 notifications an hour per job)") {
		t.Errorf("the recovery's log does not say it was rate limited:\n%s", log)
	}
	if want := []string{notify.Delivered, notify.RateLimited}; !slices.Equal(results, want) {
		t.Errorf("counted %v; want %v", results, want)
	}
}

// TestADuplicateDeliveryNotifiesNothingMore: every task delivered a second
// time (as a queue may, or after a crash before its acknowledgement) finds
// the transition committed, and nothing is posted again.
func TestADuplicateDeliveryNotifiesNothingMore(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	s := newStack(t, loopback, notify.Options{})
	s.define(r, true, "", engine.NotifyFailure, engine.NotifyRecovery)
	s.runUntil(t0.Add(90 * time.Second))
	s.define(r, false, "", engine.NotifyFailure, engine.NotifyRecovery)
	s.runUntil(t0.Add(150 * time.Second))
	if n := len(r.got()); n != 2 {
		t.Fatalf("%d notifications before the repeats; want the failure and the recovery", n)
	}
	s.mu.Lock()
	again := append([]task.Task(nil), s.delivered...)
	s.mu.Unlock()
	for _, tk := range again {
		if err := s.eng.HandleTask(s.ctx, tk); err != nil {
			t.Fatalf("redelivering %s: %v", tk, err)
		}
	}
	if posts := r.got(); len(posts) != 2 {
		t.Errorf("%d notifications after every task came twice: %v; want still 2", len(posts), posts)
	}
}

// async is a target whose attempts run on their own and never end here.
type async struct{}

func (async) Launch(context.Context, targets.Request) targets.Result {
	return targets.Result{Status: targets.Running}
}

// TestALongRunIsToldOncePerAttempt: an attempt still running when the
// job's long_run has passed is told of once, however long it runs on and
// however often the task comes; an attempt that ended in time is not.
func TestALongRunIsToldOncePerAttempt(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	s := newStack(t, loopback, notify.Options{})
	for id, kind := range map[string]string{"p/slow": "async", "p/quick": "noop"} {
		def := engine.Definition{Schedule: "* * * * *", Target: kind, Policy: statemachine.Policy{Timeout: time.Hour},
			Notify: &engine.Notify{URL: r.URL + "/hook", LongRun: 5 * time.Minute}}
		if err := s.eng.Define(s.ctx, id, def); err != nil {
			t.Fatal(err)
		}
	}
	s.runUntil(t0.Add(5*time.Minute + 59*time.Second))
	if posts := r.got(); len(posts) != 0 {
		t.Fatalf("told before the threshold: %v", posts)
	}
	s.runUntil(t0.Add(20 * time.Minute))
	s.mu.Lock()
	again := append([]task.Task(nil), s.delivered...)
	s.mu.Unlock()
	for _, tk := range again {
		if err := s.eng.HandleTask(s.ctx, tk); err != nil {
			t.Fatalf("redelivering %s: %v", tk, err)
		}
	}
	posts := r.got()
	if len(posts) != 1 {
		t.Fatalf("%d notifications: %v; want one, of p/slow", len(posts), posts)
	}
	b := posts[0].body
	if posts[0].key != "p/slow/20260302T100100Z/long_run-1" || b["event"] != "long_run" || b["attempt"] != 1.0 || b["since"] != "2026-03-02T10:01:00Z" ||
		b["text"] != "Sundial job p/slow: invocation 20260302T100100Z (attempt 1) has been running for 5m0s" {
		t.Errorf("the notification: %s %v", posts[0].key, b)
	}
	inv, err := s.st.Invocation(s.ctx, "p/slow", "20260302T100100Z")
	if err != nil {
		t.Fatal(err)
	}
	if log := string(inv.Log); !strings.Contains(log, "notify long_run (attempt 1): sending to") || !strings.Contains(log, "notify long_run: delivered (HTTP 200)") {
		t.Errorf("the log does not record the notification:\n%s", log)
	}
}
