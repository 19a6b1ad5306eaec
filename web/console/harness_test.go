package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// t0 is where the demo's clock starts: a Friday evening, two days before the
// United States move their clocks forward, so a New York schedule's next
// fire times cross a DST transition.
var t0 = time.Date(2026, 3, 6, 20, 0, 0, 0, time.UTC)

// Who the tests sign in as. Administrators see everything; the others
// have what the demo's grants give them.
const (
	admin     = "user:oncall@example.com"
	owner     = "user:olive@example.com"                 // owner of payments
	triggerer = "user:trina@example.com"                 // triggerer of payments
	reader    = "user:reed@example.com"                  // reader of payments
	narrow    = "user:nadia@example.com"                 // reader of payments/nightly-report only
	outsider  = "user:oscar@example.com"                 // nothing
	hostileID = `"><img src=x onerror=window.__pwned=1>` // a job name
)

// hostile strings that must render as text wherever they show.
const (
	hostileReason = `<script>window.__pwned=2</script> maintenance`
	hostileLog    = "line 1\n<script>window.__pwned=3</script>\n\"><img src=x onerror=window.__pwned=4>\n"
	hostileConfig = `search.yaml:12: jobs[2].schedule: "<script>window.__pwned=5</script>" is not a schedule`
)

// site is the embedded shape on a fake clock with the console mounted:
// the SQLite store, the local dispatcher, the watchdog and the engine, all
// real; the demo's projects applied and a day of history run.
type site struct {
	t       *testing.T
	ctx     context.Context
	clk     *fakeclock.Clock
	st      *sqlite.Store
	eng     *engine.Engine
	disp    *local.Dispatcher
	wd      *watchdog.Watchdog
	handler http.Handler
	// now is the server's clock: the fake clock, but never back from the
	// latest time it read.
	now func() time.Time
}

func newSite(t testing.TB) *site {
	t.Helper()
	s := &site{ctx: context.Background(), clk: fakeclock.New(t0)}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.st = st
	// The demo's targets move the clock forward as they run, and RunUntil
	// may set it back to where it stops: the server never sees time go
	// backwards, as a real one would not.
	var mu sync.Mutex
	var last time.Time
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if t := s.clk.Now(); t.After(last) {
			last = t
		}
		return last
	}
	s.now = now
	q := &enginetest.LateQueue{}
	targets := map[string]targets.Target{"noop": demoTarget{clk: s.clk}, "async": async{}, "flaky": flaky{clk: s.clk}, "logs": logs{}}
	s.eng = engine.New(st, q, targets, engine.Options{Now: now})
	s.disp = local.New(st, s.eng.HandleTask, local.Options{Owner: "proc-1", Workers: 1, OrphanAfter: 10 * time.Second, Now: now, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = s.disp
	s.wd = watchdog.New(st, s.eng, watchdog.Options{Now: now})
	roles, err := access.NewRoles(access.Settings{Administrators: []access.Member{admin}})
	if err != nil {
		t.Fatal(err)
	}
	s.handler = web.New(web.Options{
		Engine: s.eng, Store: st, Authenticators: signin.Chain{testIdentity{}}, Roles: roles,
		Now: now, Console: true, SignIn: "/auth/signin",
	})
	return s
}

// demo applies the demo's projects: the examples' demo project, payments
// (with a job that fails now and then, one paused with a reason, one whose
// invocations keep running, and one with a hostile name) and search, whose
// newest config is refused; then it runs a day.
func (s *site) demo(t testing.TB) {
	t.Helper()
	def := func(sched, zone, kind, spec string, p statemachine.Policy) engine.Definition {
		return engine.Definition{Schedule: sched, TimeZone: zone, Target: kind, Spec: json.RawMessage(spec), Policy: p}
	}
	apply := func(project, rev, file string, grants []access.RoleGrant, jobs map[string]engine.Definition) {
		r := engine.Revision{ID: rev, File: file, Grants: grants, Commit: demoCommits[rev]}
		for name, d := range jobs {
			r.Jobs = append(r.Jobs, engine.Job{ID: project + "/" + name, Definition: d})
		}
		if err := s.eng.ApplyProject(s.ctx, project, r); err != nil {
			t.Fatal(err)
		}
	}
	retry := statemachine.Policy{MaxAttempts: 3, MinBackoff: 10 * time.Second, MaxBackoff: time.Minute}
	apply("demo", "5d41402abc4b", "demo.yaml", nil, map[string]engine.Definition{
		"heartbeat":    def("@every 30m", "", "noop", `{}`, statemachine.Policy{}),
		"slow-minute":  def("0 */20 * * * *", "", "noop", `{"sleep":"5s"}`, statemachine.Policy{Overlap: statemachine.OverlapQueueOne, Timeout: 30 * time.Second}),
		"always-fails": def("H/15 * * * *", "", "noop", `{"fail":true}`, retry),
		"on-demand":    def("triggered", "", "noop", `{"sleep":"2s"}`, statemachine.Policy{}),
	})
	grants := []access.RoleGrant{
		{Role: access.Owner, Members: []access.Member{owner}},
		{Role: access.Triggerer, Members: []access.Member{triggerer}},
		{Role: access.Reader, Members: []access.Member{reader}},
		{Role: access.Reader, Members: []access.Member{narrow}, Jobs: []string{"nightly-report"}},
	}
	apply("payments", paymentsSHA, "payments.yaml", grants, map[string]engine.Definition{
		"nightly-report": def("30 2 * * *", "America/New_York", "logs", `{"report":"daily"}`, statemachine.Policy{Timeout: 10 * time.Minute}),
		"settle":         def("*/10 * * * *", "", "flaky", `{"bank":"acme"}`, statemachine.Policy{}),
		"reconcile":      def("5 * * * *", "Europe/Paris", "noop", `{"sleep":"40s"}`, statemachine.Policy{}),
		"watch-deploys":  def("triggered", "", "async", `{}`, statemachine.Policy{Overlap: statemachine.OverlapAllow, MaxConcurrent: 3}),
		hostileID:        def("0 * * * *", "", "noop", `{}`, statemachine.Policy{}),
	})
	apply("search", searchSHA, "search.yaml", nil, map[string]engine.Definition{
		"reindex": def("0 3 * * *", "", "noop", `{"sleep":"3m"}`, statemachine.Policy{}),
	})
	s.runUntil(t, t0.Add(24*time.Hour))
	if err := s.eng.Pause(s.ctx, "payments/reconcile", owner, hostileReason); err != nil {
		t.Fatal(err)
	}
	if err := s.eng.RecordConfigError(s.ctx, "search", "search.yaml", hostileConfig, s.clk.Now(), &engine.Commit{SHA: refusedSHA}); err != nil {
		t.Fatal(err)
	}
	s.runUntil(t, s.clk.Now().Add(2*time.Hour))
}

// The demo's repo projects: payments and search run commits of a config
// repo, and search's newest commit is refused; demo is read from a
// directory.
const (
	paymentsSHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"
	searchSHA   = "2c26b46b68ffc68ff99b453c1d30413413422d70"
	refusedSHA  = "fcde2b2edba56bf408601fb721fe9b5c338d10ee"
)

var demoCommits = map[string]*engine.Commit{
	paymentsSHA: {SHA: paymentsSHA, Author: "Olive Owner <olive@example.com>", Time: t0.Add(-3 * time.Hour),
		Subject: "payments: the bank runs every 10 minutes", Link: "https://git.example.com/config/blob/" + paymentsSHA + "/payments.yaml"},
	searchSHA: {SHA: searchSHA, Author: "Sam Search <sam@example.com>", Time: t0.Add(-26 * time.Hour),
		Subject: `search: <b>reindex</b> at 03:00`, Link: "https://git.example.com/config/blob/" + searchSHA + "/search.yaml"},
}

func (s *site) runUntil(t testing.TB, until time.Time) {
	t.Helper()
	if err := enginetest.RunUntil(s.ctx, s.clk, s.st, s.disp, s.wd, until); err != nil {
		t.Fatal(err)
	}
}

// testIdentity is the tests' sign-in: the X-Test-Identity header names
// the caller.
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

// demoTarget is noop on the fake clock: its sleep moves the clock
// instead of waiting, so runs have durations.
type demoTarget struct{ clk *fakeclock.Clock }

func (d demoTarget) Launch(ctx context.Context, req targets.Request) targets.Result {
	var spec struct {
		Sleep string `json:"sleep"`
		Fail  bool   `json:"fail"`
	}
	json.Unmarshal(req.Spec, &spec)
	if s, err := time.ParseDuration(spec.Sleep); err == nil {
		d.clk.Advance(s)
	}
	if spec.Fail {
		return targets.Result{Status: targets.Failed, Message: "noop: failing as asked"}
	}
	return targets.Result{Status: targets.Succeeded, Message: "noop: done"}
}

// flaky fails one occurrence in four, by a hash of its time, and takes
// from 20 s to 3 min.
type flaky struct{ clk *fakeclock.Clock }

func (f flaky) Launch(ctx context.Context, req targets.Request) targets.Result {
	h := fnv.New32a()
	fmt.Fprint(h, req.Occurrence.Unix())
	n := h.Sum32()
	f.clk.Advance(20*time.Second + time.Duration(n%160)*time.Second)
	if n%4 == 0 {
		return targets.Result{Status: targets.Failed, Message: "bank acme: 503 Service Unavailable", Log: []byte("POST https://bank.example/settle\n503 Service Unavailable\n")}
	}
	return targets.Result{Status: targets.Succeeded, Message: "200 OK: settled", Log: []byte("POST https://bank.example/settle\n200 OK\n")}
}

// logs succeeds with a log whose lines try to break out of the page.
type logs struct{}

func (logs) Launch(ctx context.Context, req targets.Request) targets.Result {
	return targets.Result{Status: targets.Succeeded, Message: `wrote report "daily" <b>ok</b>`, Log: []byte(hostileLog)}
}

// async accepts every launch and runs on its own: its invocations stay
// RUNNING until aborted.
type async struct{}

func (async) Launch(context.Context, targets.Request) targets.Result {
	return targets.Result{Status: targets.Running, Message: "started"}
}

// page is a page as a viewer got it, parsed.
type page struct {
	status int
	header http.Header
	doc    *html.Node
	raw    string
}

// get fetches a page as who ("" for signed out).
func (s *site) get(t testing.TB, who, path string) page {
	t.Helper()
	return s.do(t, who, "GET", path, nil, nil)
}

func (s *site) do(t testing.TB, who, method, path string, form url.Values, header http.Header) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, path, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if who != "" {
		r.Header.Set("X-Test-Identity", who)
	}
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	raw := w.Body.String()
	doc, err := html.Parse(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return page{status: w.Code, header: w.Header(), doc: doc, raw: raw}
}

// text is what a page shows: its text, white space collapsed, without
// scripts' and styles' content.
func (p page) text() string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "title" && n.Parent != nil && n.Parent.Data == "head") {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteString(" ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	return strings.Join(strings.Fields(b.String()), " ")
}

// find returns the elements named tag whose attribute attr is val (any
// value for val ""; any element for attr "").
func (p page) find(tag, attr, val string) []*html.Node {
	var out []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag && attr == "" {
			out = append(out, n)
		} else if n.Type == html.ElementNode && n.Data == tag {
			for _, a := range n.Attr {
				if a.Key == attr && (val == "" || a.Val == val) {
					out = append(out, n)
					break
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// actions lists the paths the forms of the page's content post to (not
// the frame's sign-out).
func (p page) actions() []string {
	var out []string
	for _, f := range p.find("form", "method", "post") {
		if inside(f, "main") {
			out = append(out, attr(f, "action"))
		}
	}
	return out
}

// jobPath is the console path of a job of payments.
func jobPath(name string) string { return "/projects/payments/jobs/" + url.PathEscape(name) }

// findIn returns the elements named tag under n.
func findIn(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
		out = append(out, findIn(c, tag)...)
	}
	return out
}

// textOf is the text under n, white space collapsed.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
