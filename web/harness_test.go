package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// t0 is where every test's clock starts: a Monday, 10:00 UTC.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// adminToken is the token the harness's handler accepts.
const adminToken = "s3cret-admin-token-0123456789"

// harness is the embedded shape on a fake clock: the real SQLite store,
// the real local dispatcher and watchdog, the real engine, and the API
// handler over them.
type harness struct {
	t       *testing.T
	ctx     context.Context
	clk     *fakeclock.Clock
	path    string // the store's database file
	st      *sqlite.Store
	eng     *engine.Engine
	disp    *local.Dispatcher
	wd      *watchdog.Watchdog
	metrics *web.Metrics
	handler http.Handler
	held    held
	// peer is the server's end of a real loopback connection from this
	// process: requests the tests send as local callers come over it, so
	// that the kernel says they are the server's own user's.
	peer net.Conn
}

// loopbackConn is the server's end of a loopback connection from this
// process, open until the test ends.
func loopbackConn(t *testing.T) net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return server
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), clk: fakeclock.New(t0), path: filepath.Join(t.TempDir(), "sundial.db"), peer: loopbackConn(t), held: held{called: make(chan struct{}, 1), release: make(chan struct{})}}
	st, err := sqlite.Open(h.path, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.st = st
	h.metrics = web.NewMetrics(st)
	q := &enginetest.LateQueue{}
	targets := map[string]targets.Target{"noop": noop.Target{}, "async": async{}, "held": h.held}
	h.eng = engine.New(st, q, targets, engine.Options{Now: h.clock, Observer: h.metrics})
	h.metrics.Read(web.Sources{Store: st, Engine: h.eng, Now: h.clock, Names: true})
	h.disp = local.New(st, h.eng.HandleTask, local.Options{Owner: "proc-1", Workers: 4, OrphanAfter: 10 * time.Second, Now: h.clock, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = h.disp
	h.wd = watchdog.New(st, h.eng, watchdog.Options{Now: h.clock})
	h.handler = newHandler(h, st, adminToken, true)
	return h
}

// newHandler is the API over the harness's engine and the given store.
// singleUser is the single-user mode: local callers are the
// administrator. Otherwise sign-in is configured: testIdentity's header
// stands for it. token, if set, is the admin token.
func newHandler(h *harness, st store.Store, token string, singleUser bool) http.Handler {
	settings := access.Settings{
		Administrators:     []access.Member{"user:root@example.com", "group:admins"},
		Groups:             map[string][]access.Identity{"sre": {"user:carol@example.com"}, "admins": {"user:oncall@example.com"}},
		LocalAdministrator: singleUser,
	}
	var authn signin.Chain
	if singleUser {
		authn = append(authn, signin.LocalCaller{})
	} else {
		authn = append(authn, testIdentity{})
	}
	if token != "" {
		authn = append(authn, signin.AdminToken(token))
		settings.Administrators = append(settings.Administrators, access.Member(signin.AdminTokenIdentity))
	}
	roles, err := access.NewRoles(settings)
	if err != nil {
		h.t.Fatal(err)
	}
	return web.New(web.Options{
		Engine: h.eng, Store: st, Metrics: h.metrics,
		Authenticators: authn, Roles: roles, Now: h.clock,
	})
}

// testIdentity is the tests' sign-in: the X-Test-Identity header names
// the caller. It exists only in tests.
type testIdentity struct{}

func (testIdentity) Authenticate(r *http.Request) (access.Identity, error) {
	v := r.Header.Get("X-Test-Identity")
	if v == "" {
		return access.Anonymous, nil
	}
	if v == "forged" {
		return "", errors.New("the test credential is forged")
	}
	return access.ParseIdentity(v)
}

// plainStore hides every method of a store but store.Store's.
type plainStore struct{ store.Store }

func equalJSON(a, b any) bool { return reflect.DeepEqual(a, b) }

func (h *harness) clock() time.Time { return h.clk.Now() }

func (h *harness) set(t time.Time) { h.clk.Set(t) }

// runUntil runs every task due up to until (enginetest.RunUntil).
func (h *harness) runUntil(until time.Time) {
	h.t.Helper()
	if err := enginetest.RunUntil(h.ctx, h.clk, h.st, h.disp, h.wd, until); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) define(id string, def engine.Definition) {
	h.t.Helper()
	if err := h.eng.Define(h.ctx, id, def); err != nil {
		h.t.Fatal(err)
	}
}

// req is one API request and who makes it.
type req struct {
	method, path, body string
	// remote makes the caller 203.0.113.7 instead of 127.0.0.1.
	remote bool
	host   string // the Host header, if not the harness's
	token  string
	header http.Header
}

// answer is the response, its body decoded as JSON.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (h *harness) do(r req) answer {
	h.t.Helper()
	hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	hr.RemoteAddr = "127.0.0.1:53211"
	hr.Host = "127.0.0.1:8080"
	if h.peer != nil {
		hr = hr.WithContext(signin.ConnContext(hr.Context(), h.peer))
	}
	if r.remote {
		hr.RemoteAddr = "203.0.113.7:40000"
		hr.Host = "sundial.example.com"
	}
	if r.host != "" {
		hr.Host = r.host
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		hr.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, hr)
	res := w.Result()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, header: res.Header, raw: string(raw)}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			h.t.Fatalf("%s %s: answer is not a JSON object: %v\n%s", r.method, r.path, err, raw)
		}
	}
	return a
}

// ok does the request as the local admin and fails the test unless it
// answers want.
func (h *harness) ok(method, path, body string, want int) map[string]any {
	h.t.Helper()
	a := h.do(req{method: method, path: path, body: body})
	if a.status != want {
		h.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, a.status, want, a.raw)
	}
	return a.body
}

// snapshot is everything of the store a request could change.
type snapshot struct {
	jobs  []*store.JobRecord
	tasks []task.Task
	invs  map[string][]*store.InvocationRecord
}

func (h *harness) snapshot() snapshot {
	h.t.Helper()
	s := snapshot{invs: map[string][]*store.InvocationRecord{}}
	jobs, _, err := h.st.Jobs(h.ctx, "", store.Page{Limit: 1000})
	if err != nil {
		h.t.Fatal(err)
	}
	s.jobs = jobs
	if s.tasks, err = h.st.Tasks(h.ctx, 1000); err != nil {
		h.t.Fatal(err)
	}
	for _, j := range jobs {
		invs, _, err := h.st.Invocations(h.ctx, j.ID, store.Page{Limit: 1000})
		if err != nil {
			h.t.Fatal(err)
		}
		s.invs[j.ID] = invs
	}
	return s
}

func (h *harness) unchanged(before snapshot, what string) {
	h.t.Helper()
	after := h.snapshot()
	if !reflect.DeepEqual(after.jobs, before.jobs) {
		h.t.Errorf("%s changed the jobs", what)
	}
	if !reflect.DeepEqual(after.tasks, before.tasks) {
		h.t.Errorf("%s changed the tasks:\n%v\nwant\n%v", what, after.tasks, before.tasks)
	}
	if !reflect.DeepEqual(after.invs, before.invs) {
		h.t.Errorf("%s changed the invocations", what)
	}
}

// async is a target that accepts every launch and runs it on its own, as
// a Swarming task would: its invocations stay RUNNING until reported or
// aborted.
type async struct{}

func (async) Launch(context.Context, targets.Request) targets.Result {
	return targets.Result{Status: targets.Running, Message: "started"}
}

// held is a synchronous target (targets.Synchronous), as command is,
// whose calls last until release is closed; called gets a value as each
// begins.
type held struct {
	called  chan struct{}
	release chan struct{}
}

func (h held) Launch(context.Context, targets.Request) targets.Result {
	h.called <- struct{}{}
	<-h.release
	return targets.Result{Status: targets.Succeeded, Message: "done"}
}

func (held) RunsWithinCall() {}

// get walks a decoded JSON value by object keys and array indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
