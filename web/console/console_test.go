package console_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// demoSite is one demo shared by the tests that only read it; the tests
// that change jobs build their own.
func demoSite(t *testing.T) *site {
	t.Helper()
	s := newSite(t)
	s.demo(t)
	return s
}

// A viewer sees exactly the projects and jobs it may read: the narrow
// reader of one job sees payments with that job only, and no other
// project; a job or project it may not read answers as one that does not
// exist, with no name of it in the page.
func TestPagesShowOnlyWhatTheViewerMayRead(t *testing.T) {
	t.Parallel()
	s := demoSite(t)

	home := s.get(t, narrow, "/").text()
	if !strings.Contains(home, "payments") || strings.Contains(home, "demo") || strings.Contains(home, "search") {
		t.Errorf("the narrow reader's projects page shows %q; want payments only", home)
	}
	jobs := s.get(t, narrow, "/projects/payments")
	if got := jobs.text(); !strings.Contains(got, "nightly-report") || strings.Contains(got, "settle") || strings.Contains(got, "reconcile") || strings.Contains(got, "1 of 1 jobs") == false {
		t.Errorf("the narrow reader's payments page shows %q; want nightly-report alone", got)
	}
	for _, path := range []string{jobPath("settle"), jobPath("settle") + "/invocations/20260307T120000Z", "/projects/search", "/projects/demo/jobs/heartbeat"} {
		hidden := s.get(t, narrow, path)
		missing := s.get(t, narrow, strings.Replace(path, "settle", "no-such-job", 1))
		if hidden.status != http.StatusNotFound {
			t.Errorf("%s for the narrow reader: %d, want 404", path, hidden.status)
		}
		if strings.Contains(hidden.raw, "settle") && !strings.Contains(path, "settle") || strings.Contains(hidden.text(), "At minute") {
			t.Errorf("%s for the narrow reader leaks the job: %q", path, hidden.text())
		}
		if strings.Contains(path, "settle") && strings.ReplaceAll(hidden.text(), "settle", "no-such-job") != missing.text() {
			t.Errorf("%s for the narrow reader reads %q; a job that does not exist reads %q", path, hidden.text(), missing.text())
		}
	}
	if p := s.get(t, outsider, "/"); strings.Contains(p.text(), "payments") {
		t.Errorf("the outsider's projects page shows payments: %q", p.text())
	}
	// The configs page's changes of the last import name its one job
	// alone; before, they named every job the import added.
	if p := s.get(t, narrow, "/configs"); !strings.Contains(p.text(), "nightly-report") || strings.Contains(p.raw, "settle") || strings.Contains(p.raw, "reconcile") {
		t.Errorf("the narrow reader's configs page shows %q; want payments' changes of nightly-report alone", p.text())
	}
	if p := s.get(t, outsider, "/configs"); strings.Contains(p.text(), "search.yaml") {
		t.Errorf("the outsider's configs page shows search's config: %q", p.text())
	}
}

// The projects page lists first the jobs whose last invocation failed,
// most failures first, and only those the viewer may read.
func TestProjectsPageListsFailingJobsFirst(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	names := func(who string) []string {
		var out []string
		for _, sec := range s.get(t, who, "/").find("section", "class", "attention") {
			for _, a := range findIn(sec, "a") {
				out = append(out, textOf(a))
			}
		}
		return out
	}
	var want []string
	for _, id := range []string{"demo/always-fails", "payments/settle"} {
		if s.view(t, id).State.Failures > 0 {
			want = append(want, id)
		}
	}
	if got := names(admin); !slices.Equal(got, want) {
		t.Errorf("the administrator's list of failing jobs is %v, want %v", got, want)
	}
	if got := names(narrow); len(got) != 0 {
		t.Errorf("the narrow reader of nightly-report sees failing jobs %v, want none", got)
	}
}

// Each viewer gets only the buttons it may use: a reader none, a
// triggerer Trigger and Backfill, an owner those and Pause on a running
// job and Resume on a paused one.
func TestButtonsOnlyForWhatTheViewerMayDo(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	for _, tc := range []struct {
		who, job string
		want     []string
	}{
		{reader, "settle", nil},
		{triggerer, "settle", []string{"/trigger", "/backfill"}},
		{owner, "settle", []string{"/trigger", "/pause", "/backfill"}},
		{owner, "reconcile", []string{"/trigger", "/resume", "/backfill"}},
	} {
		p := s.get(t, tc.who, jobPath(tc.job))
		var got []string
		for _, a := range p.actions() {
			got = append(got, strings.TrimPrefix(a, jobPath(tc.job)))
		}
		// settle may be between runs or in one: abort comes and goes.
		got = slices.DeleteFunc(got, func(a string) bool { return a == "/abort" && tc.who == owner })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s on %s sees the buttons %v, want %v", tc.who, tc.job, got, tc.want)
		}
	}
}

// A viewer without the right is refused the action itself, not only the
// button, and the job does not change.
func TestActionsNeedTheRight(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	before := s.view(t, "payments/settle")
	for _, tc := range []struct {
		who, action string
		want        int
	}{
		{reader, "pause", http.StatusForbidden},
		{reader, "trigger", http.StatusForbidden},
		{triggerer, "pause", http.StatusForbidden},
		{triggerer, "abort", http.StatusForbidden},
		{outsider, "pause", http.StatusNotFound},
		{"", "pause", http.StatusUnauthorized},
	} {
		p := s.do(t, tc.who, "POST", jobPath("settle")+"/"+tc.action, url.Values{"reason": {"because"}}, nil)
		if p.status != tc.want {
			t.Errorf("%q %s: %d, want %d: %s", tc.who, tc.action, p.status, tc.want, p.text())
		}
	}
	if after := s.view(t, "payments/settle"); after.State.State != before.State.State || len(after.Audit) != len(before.Audit) {
		t.Errorf("refused actions changed the job: %s with %d audit entries, was %s with %d", after.State.State, len(after.Audit), before.State.State, len(before.Audit))
	}
}

// A form posted from another site is refused before anything runs: the
// owner's browser must not pause a job because a page elsewhere said so.
func TestCrossSitePostIsRefused(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	for _, h := range []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Origin": {"https://evil.example"}},
	} {
		p := s.do(t, owner, "POST", jobPath("settle")+"/pause", url.Values{"reason": {"evil"}}, h)
		if p.status != http.StatusForbidden || !strings.Contains(p.text(), "cross-origin request refused") {
			t.Errorf("POST with %v: %d %q, want 403 cross-origin refused", h, p.status, p.text())
		}
	}
	if v := s.view(t, "payments/settle"); v.State.State == statemachine.Paused {
		t.Error("a cross-site post paused the job")
	}
	// The same form from the console itself works.
	p := s.do(t, owner, "POST", jobPath("settle")+"/pause", url.Values{"reason": {"bank maintenance"}}, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("same-origin pause: %d %q", p.status, p.text())
	}
	if v := s.view(t, "payments/settle"); v.State.State != statemachine.Paused || v.State.Reason.Note != "bank maintenance" {
		t.Errorf("after a same-origin pause the job is %s (%q)", v.State.State, v.State.Reason.Note)
	}
}

// Pause asks for a reason: none, or only spaces, or one too long, is
// refused with a clear error and the job runs on.
func TestPauseNeedsAReason(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	for _, reason := range []string{"", "   ", strings.Repeat("x", 501)} {
		p := s.do(t, owner, "POST", jobPath("settle")+"/pause", url.Values{"reason": {reason}}, nil)
		if p.status != http.StatusBadRequest || !strings.Contains(p.text(), "reason") {
			t.Errorf("pause with reason %.10q: %d %q, want 400 naming the reason", reason, p.status, p.text())
		}
	}
	if v := s.view(t, "payments/settle"); v.State.State == statemachine.Paused {
		t.Error("a pause without a valid reason paused the job")
	}
}

// Every page, error pages and the log download included, carries the
// strict Content-Security-Policy and refuses framing.
func TestEveryPageSetsAStrictCSP(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	inv := s.newest(t, "payments/nightly-report")
	for _, path := range []string{"/", "/configs", "/playground", "/projects/payments", jobPath("nightly-report"),
		invPath("nightly-report", inv.ID), invPath("nightly-report", inv.ID) + "/log", "/nowhere", "/projects/payments?state=bogus",
		"/fleet", "/projects/payments/grid", "/forecast", "/configs/payments/changes"} {
		p := s.get(t, admin, path)
		csp := p.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %s", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: Content-Security-Policy %q allows inline or eval'd script", path, csp)
		}
		if strings.HasSuffix(path, "/log") {
			// The log is the job's text, served as text to save: a
			// browser must neither sniff it nor show it as a page.
			if p.header.Get("Content-Type") != "text/plain; charset=utf-8" || p.header.Get("X-Content-Type-Options") != "nosniff" ||
				!strings.HasPrefix(p.header.Get("Content-Disposition"), "attachment;") {
				t.Errorf("%s: served as %q, %q, %q; want plain text, nosniff, an attachment", path,
					p.header.Get("Content-Type"), p.header.Get("X-Content-Type-Options"), p.header.Get("Content-Disposition"))
			}
			continue
		}
		if len(p.find("script", "src", "")) != len(p.find("script", "", "")) {
			t.Errorf("%s has an inline script", path)
		}
	}
}

// A signed-out viewer is offered the sign-in, back to the page it asked
// for, and sees nothing of any project.
func TestSignedOutViewerGetsTheSignInLink(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	for _, path := range []string{"/", jobPath("settle")} {
		p := s.get(t, "", path)
		links := p.find("a", "href", "/auth/signin?next="+url.QueryEscape(path))
		if len(links) == 0 {
			t.Errorf("%s signed out: no sign-in link back to it in %q", path, p.text())
		}
		if strings.Contains(p.text(), "settle") || strings.Contains(p.text(), "payments") {
			t.Errorf("%s signed out shows a project or job: %q", path, p.text())
		}
	}
	if p := s.get(t, "forged", "/"); p.status != http.StatusUnauthorized {
		t.Errorf("forged credentials: %d, want 401", p.status)
	}
}

// The page refused to a signed-out viewer says how to get in on this
// server, and nothing false: the sign-ins it has (each a link back to the
// page), IAP, or the single-user mode; "open the console on the server's
// own machine" only where that is how to get in.
func TestRefusedPageSaysHowToGetInHere(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	dir := t.TempDir()
	_, line := signin.NewToken(reader)
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenSetup, err := signin.New(s.ctx, signin.Settings{StaticTokensFile: tokens, LocalMode: true, OneProcess: true},
		func() (signin.Revocations, error) { return signin.NewMemory(s.now), nil }, s.now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	iap, err := signin.NewIAP(signin.IAPOptions{Audience: "/projects/1/apps/acme", Now: s.now})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/projects/payments"
	next := "?next=" + url.QueryEscape(path)
	for _, c := range []struct {
		name  string
		chain signin.Chain
		oidc  string
		says  string
		links []string
	}{
		{"OIDC", signin.Chain{testIdentity{}}, signin.SignInPath, "sign in to see this page", []string{signin.SignInPath + next}},
		{"token sign-in", tokenSetup.Chain(), "", "sign in with a token to see this page", []string{signin.TokenSignInPath + next}},
		{"both", tokenSetup.Chain(), signin.SignInPath, "sign in, with your account or with a token", []string{signin.SignInPath + next, signin.TokenSignInPath + next}},
		{"IAP", signin.Chain{iap}, "", "signs people in through Identity-Aware Proxy", nil},
		{"the single-user mode", signin.Chain{signin.LocalCaller{}}, "", "open the console in a browser on the server's own machine", nil},
		{"bearer tokens alone", signin.Chain{&signin.StaticTokens{}}, "", "signs no one in through the browser", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			roles, err := access.NewRoles(access.Settings{Administrators: []access.Member{admin}})
			if err != nil {
				t.Fatal(err)
			}
			h := web.New(web.Options{Engine: s.eng, Store: s.st, Authenticators: c.chain, Roles: roles, Now: s.now, Console: true, SignIn: c.oidc})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			doc, err := html.Parse(w.Body)
			if err != nil {
				t.Fatal(err)
			}
			p := page{status: w.Code, doc: doc}
			if p.status != http.StatusUnauthorized || !strings.Contains(p.text(), c.says) {
				t.Errorf("%d %q; want 401 saying %q", p.status, p.text(), c.says)
			}
			if c.name != "the single-user mode" && strings.Contains(p.text(), "own machine") {
				t.Errorf("the page sends the viewer to the server's own machine, which is not how to get in here: %q", p.text())
			}
			var got []string
			for _, a := range p.find("a", "class", "button") {
				if inside(a, "main") {
					got = append(got, attr(a, "href"))
				}
			}
			if !slices.Equal(got, c.links) {
				t.Errorf("the page offers %v, want %v", got, c.links)
			}
		})
	}
}

// The filters of the jobs page: by state, failing, and text in the id; a
// value the page cannot read is refused, not ignored.
func TestJobsPageFilters(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	names := func(query string) []string {
		p := s.get(t, admin, "/projects/payments"+query)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, p.status, p.text())
		}
		var out []string
		for _, th := range p.find("th", "scope", "row") {
			out = append(out, textOf(th))
		}
		return out
	}
	if got := names("?state=PAUSED"); !slices.Equal(got, []string{"reconcile"}) {
		t.Errorf("state PAUSED lists %v, want [reconcile]", got)
	}
	if got := names("?q=RECON"); !slices.Equal(got, []string{"reconcile"}) {
		t.Errorf("search RECON lists %v, want [reconcile]", got)
	}
	failing := names("?failing=1")
	for _, name := range failing {
		if v := s.view(t, "payments/"+name); v.State.Failures == 0 {
			t.Errorf("failing lists %s, whose last run did not fail", name)
		}
	}
	for _, q := range []string{"?state=bogus", "?page=0", "?failing=maybe", "?stat=PAUSED", "?q=a&q=b"} {
		if p := s.get(t, admin, "/projects/payments"+q); p.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, p.status)
		}
	}
}

// A job's strip holds its newest 20 occurrences, oldest first, each
// linking to its invocation.
func TestStripLinksTheLast20Occurrences(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	invs, _, err := s.st.Invocations(s.ctx, "payments/settle", store.Page{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := len(invs) - 1; i >= 0; i-- {
		want = append(want, invPath("settle", invs[i].ID))
	}
	p := s.get(t, admin, "/projects/payments?q=settle")
	var got []string
	for _, svg := range p.find("svg", "class", "strip") {
		for _, a := range findIn(svg, "a") {
			got = append(got, attr(a, "href"))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the strip links\n%v\nwant\n%v", got, want)
	}
}

// The next fire times of a New York schedule call out the change to
// daylight time among them.
func TestNextFireTimesCallOutDST(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	p := s.get(t, admin, jobPath("nightly-report"))
	var notes []string
	for _, li := range p.find("strong", "class", "dst") {
		notes = append(notes, textOf(li))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "EST") || !strings.Contains(notes[0], "EDT") {
		t.Errorf("DST notes %q, want one, from EST to EDT", notes)
	}
}

func (s *site) view(t *testing.T, jobID string) engine.View {
	t.Helper()
	v, err := s.eng.View(s.ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (s *site) newest(t testing.TB, jobID string) *store.InvocationRecord {
	t.Helper()
	invs, _, err := s.st.Invocations(s.ctx, jobID, store.Page{Limit: 1})
	if err != nil || len(invs) == 0 {
		t.Fatalf("newest invocation of %s: %v (%d)", jobID, err, len(invs))
	}
	return invs[0]
}

func invPath(job, id string) string { return jobPath(job) + "/invocations/" + url.PathEscape(id) }

// With the console mounted the API answers as before: JSON, its own 404s
// under /api/v1, and the console's pages everywhere else.
func TestAPIStaysJSONBesideTheConsole(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	for path, want := range map[string]string{
		"/api/v1/projects": "application/json; charset=utf-8",
		"/api/v1/nowhere":  "application/json; charset=utf-8",
		"/":                "text/html; charset=utf-8",
		"/nowhere":         "text/html; charset=utf-8",
	} {
		if got := s.get(t, admin, path).header.Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", path, got, want)
		}
	}
}

// The assets are served, and nothing else of the embedded files: no
// listing, no template.
func TestStaticServesOnlyTheAssets(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	for path, want := range map[string]int{
		"/static/console.css":    http.StatusOK,
		"/static/console.js":     http.StatusOK,
		"/static/":               http.StatusNotFound,
		"/static/templates/x":    http.StatusNotFound,
		"/templates/layout.html": http.StatusNotFound,
		"/static/../console.go":  http.StatusNotFound,
	} {
		if got := s.get(t, admin, path).status; got != want {
			t.Errorf("%s: %d, want %d", path, got, want)
		}
	}
}

// A repo project's pages show the commit its revision was read at: the
// short sha linked with the record's link, the author, the time and the
// subject (as text, whatever it holds), and the configs page names the
// refused commit beside its error.
func TestPagesShowTheRevisionsCommit(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	payments, search := demoCommits[paymentsSHA], demoCommits[searchSHA]

	home := s.get(t, admin, "/")
	for _, c := range []*engine.Commit{payments, search} {
		links := home.find("a", "href", c.Link)
		if len(links) != 1 || textOf(links[0]) != c.SHA[:12] {
			t.Errorf("the projects page links %s %d times (%v); want once, as %s", c.Link, len(links), links, c.SHA[:12])
		}
		wants(t, "the projects page", home.text(), c.Author, c.Subject)
	}
	if strings.Contains(home.raw, "<b>reindex</b>") {
		t.Errorf("the projects page renders search's subject as HTML")
	}

	configs := s.get(t, admin, "/configs")
	card := configs.find("section", "id", "search")
	if len(card) != 1 {
		t.Fatalf("the configs page has %d cards for search", len(card))
	}
	refused := textOf(card[0])
	wants(t, "search's config card", refused, refusedSHA[:12], "is refused", search.SHA[:12], search.Author, "search.yaml:12")
	if len(configs.find("a", "href", payments.Link)) != 1 {
		t.Errorf("the configs page does not link payments' commit")
	}

	job := s.get(t, reader, jobPath("settle"))
	if len(job.find("a", "href", payments.Link)) != 1 {
		t.Errorf("the settle page does not link the commit it runs: %s", job.text())
	}
	wants(t, "the settle page", job.text(), payments.Subject, payments.Author)
	wants(t, "the reindex page", s.get(t, admin, "/projects/search/jobs/reindex").text(), refusedSHA[:12], "is refused")
}

// The invocation page names the revision the invocation ran under, not
// the one its project runs now: after a new commit changes the job, an
// older invocation still shows the commit it ran under.
func TestInvocationShowsTheRevisionItRanUnder(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	const next = "b5bb9d8014a0f9b1d61e21e796d78dccdf1352f2"
	old := s.view(t, "payments/settle").Definition
	def := old
	def.Spec = []byte(`{"bank":"acme","retry":false}`)
	p, _, err := s.eng.Project(s.ctx, "payments")
	if err != nil {
		t.Fatal(err)
	}
	rev := engine.Revision{ID: next, File: "payments.yaml", Grants: p.Grants,
		Commit: &engine.Commit{SHA: next, Author: "Olive Owner <olive@example.com>", Time: s.clk.Now(), Subject: "payments: settle without retries"}}
	jobs, _, err := s.st.Jobs(s.ctx, "payments", store.Page{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		d := s.view(t, j.ID).Definition
		if j.ID == "payments/settle" {
			d = def
		}
		rev.Jobs = append(rev.Jobs, engine.Job{ID: j.ID, Definition: d})
	}
	if err := s.eng.ApplyProject(s.ctx, "payments", rev); err != nil {
		t.Fatal(err)
	}
	applied := s.clk.Now()
	s.runUntil(t, applied.Add(15*time.Minute))

	before := s.get(t, admin, invPath("settle", "20260307T120000Z"))
	ran := before.find("dd", "class", "revision")
	// A commit that no longer runs is its id alone, shortened as git
	// shortens it, whole on hover.
	if len(ran) != 1 || textOf(ran[0]) != paymentsSHA[:12] || len(findIn(ran[0], "code")) != 1 || attr(findIn(ran[0], "code")[0], "title") != paymentsSHA {
		t.Errorf("an invocation under the first commit shows it ran under %q; want %s, %s on hover", textOf(ran[0]), paymentsSHA[:12], paymentsSHA)
	}
	newest := s.newest(t, "payments/settle")
	if newest.Status == "SKIPPED" || newest.Occurrence.Before(applied) {
		t.Fatalf("the newest invocation of settle is %s, %s at %s; want one that ran after the new commit", newest.ID, newest.Status, newest.Occurrence)
	}
	after := s.get(t, admin, invPath("settle", newest.ID))
	ran = after.find("dd", "class", "revision")
	if len(ran) != 1 || !strings.Contains(textOf(ran[0]), next[:12]) || !strings.Contains(textOf(ran[0]), "settle without retries") {
		t.Errorf("the newest invocation shows it ran under %q; want %s, the new commit", textOf(ran[0]), next[:12])
	}
}

// The configs page shows what the project's last import changed: the
// jobs added, changed and removed, each linked to its page.
func TestConfigsPageShowsWhatTheLastImportChanged(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	p, _, err := s.eng.Project(s.ctx, "search")
	if err != nil {
		t.Fatal(err)
	}
	reindex := s.view(t, "search/reindex").Definition
	changed := reindex
	changed.Schedule = "0 4 * * *"
	rev := engine.Revision{ID: "next", File: "search.yaml", Grants: p.Grants, Jobs: []engine.Job{
		{ID: "search/reindex", Definition: changed}, {ID: "search/compact", Definition: reindex}}}
	if err := s.eng.ApplyProject(s.ctx, "search", rev); err != nil {
		t.Fatal(err)
	}
	card := s.get(t, admin, "/configs").find("section", "id", "search")
	if len(card) != 1 {
		t.Fatalf("the configs page has %d cards for search", len(card))
	}
	wants(t, "search's config card", textOf(card[0]), "What changed in the last import", "Added (1) compact", "Changed (1) reindex", "Removed (0) —")
	var links []string
	for _, a := range findIn(card[0], "a") {
		links = append(links, attr(a, "href"))
	}
	for _, want := range []string{"/projects/search/jobs/compact", "/projects/search/jobs/reindex"} {
		if !slices.Contains(links, want) {
			t.Errorf("search's config card links %q; want %s among them", links, want)
		}
	}

	rev.ID, rev.Jobs = "last", rev.Jobs[:1]
	if err := s.eng.ApplyProject(s.ctx, "search", rev); err != nil {
		t.Fatal(err)
	}
	card = s.get(t, admin, "/configs").find("section", "id", "search")
	wants(t, "search's config card after compact is dropped", textOf(card[0]), "Added (0) — Changed (0) — Removed (1) compact")
}

// An owner of a project pauses many of its jobs from the jobs page with
// one reason, and resumes exactly those paused for it: a job paused for
// another reason stays paused. Only a viewer who may steer every job of
// the project sees the forms; anyone else's post is refused and changes
// nothing.
func TestBulkPauseAndResumeFromTheJobsPage(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	const incident = "bank acme incident 42"
	if forms := s.get(t, owner, "/projects/payments").actions(); !slices.Contains(forms, "/projects/payments/pause") || !slices.Contains(forms, "/projects/payments/resume") {
		t.Errorf("the owner's payments page posts to %q; want the bulk pause and resume", forms)
	}
	for _, who := range []string{triggerer, reader} {
		if forms := s.get(t, who, "/projects/payments").actions(); slices.Contains(forms, "/projects/payments/pause") {
			t.Errorf("%s sees the bulk pause", who)
		}
		if p := s.do(t, who, "POST", "/projects/payments/pause", url.Values{"reason": {incident}}, nil); p.status != http.StatusForbidden {
			t.Errorf("%s's bulk pause: %d, want 403", who, p.status)
		}
	}
	if got := s.view(t, "payments/settle").State.State; got == statemachine.Paused {
		t.Fatalf("a refused bulk pause paused settle")
	}
	if p := s.do(t, owner, "POST", "/projects/payments/pause", url.Values{"reason": {" "}}, nil); p.status != http.StatusBadRequest {
		t.Errorf("a bulk pause with no reason: %d, want 400", p.status)
	}

	p := s.do(t, owner, "POST", "/projects/payments/pause", url.Values{"reason": {incident}}, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/projects/payments?done=pause" {
		t.Fatalf("the bulk pause: %d to %q: %s", p.status, p.header.Get("Location"), p.text())
	}
	for _, id := range []string{"payments/settle", "payments/nightly-report"} {
		if st := s.view(t, id).State; st.State != statemachine.Paused || st.Reason.Note != incident {
			t.Errorf("%s after the bulk pause: %s for %q; want PAUSED for %q", id, st.State, st.Reason.Note, incident)
		}
	}
	wants(t, "the jobs page after the bulk pause", s.get(t, owner, "/projects/payments?done=pause").text(), "Done: paused the jobs picked")

	p = s.do(t, owner, "POST", "/projects/payments/resume", url.Values{"paused_for": {incident}}, nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("the bulk resume: %d: %s", p.status, p.text())
	}
	if st := s.view(t, "payments/settle").State.State; st == statemachine.Paused {
		t.Errorf("settle is still PAUSED after resuming the jobs paused for %q", incident)
	}
	if st := s.view(t, "payments/reconcile").State; st.State != statemachine.Paused || st.Reason.Note != hostileReason {
		t.Errorf("reconcile, paused for another reason, is %s for %q after the bulk resume; want PAUSED as it was", st.State, st.Reason.Note)
	}

	// A bulk pause may end by itself; a job paused already keeps its end.
	if p := s.do(t, owner, "POST", "/projects/payments/pause", url.Values{"reason": {incident}, "until": {"next week"}}, nil); p.status != http.StatusBadRequest {
		t.Errorf("a bulk pause until %q: %d, want 400", "next week", p.status)
	}
	end := s.clk.Now().Add(time.Hour).UTC().Truncate(time.Minute)
	p = s.do(t, owner, "POST", "/projects/payments/pause", url.Values{"reason": {incident}, "until": {end.Format("2006-01-02T15:04")}}, nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("the bulk pause with an end: %d: %s", p.status, p.text())
	}
	if st := s.view(t, "payments/settle").State; st.State != statemachine.Paused || !st.PausedUntil.Equal(end) {
		t.Errorf("settle after a bulk pause until %s: %s until %s", end, st.State, st.PausedUntil)
	}
	if st := s.view(t, "payments/reconcile").State; st.Reason.Note != hostileReason || !st.PausedUntil.IsZero() {
		t.Errorf("reconcile, paused already, took the bulk pause's reason or end: %q until %s", st.Reason.Note, st.PausedUntil)
	}
}
