package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
)

// gitRefresher is a refresher of the repo's projects/ over smart HTTP.
func (e *env) gitRefresher(srv *gitServer) *config.Refresher {
	e.t.Helper()
	src := gitSource(e.t, config.GitOptions{URL: srv.url(), Path: "projects", Auth: goodAuth, Link: "https://example.com/blob/{commit}/{path}"})
	return config.NewSourceRefresher([]config.Source{src}, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock})
}

func (e *env) record(project string) engine.Project {
	e.t.Helper()
	p, _, err := e.eng.Project(e.ctx, project)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// TestGitRefreshRunsEachPushedCommit: a pushed commit is applied at the
// next refresh, and the project's record keeps the commit and a link to
// the file at it; an invalid commit is refused whole, its error naming
// the file, line, field and the commit, while the last good one runs.
func TestGitRefreshRunsEachPushedCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := newGitRepo(t)
	first := r.commit("billing: hourly", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	fresh := e.gitRefresher(serveGit(t, r))
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	p := e.record("billing")
	want := engine.Commit{SHA: first, Author: "Ada Owner <ada@example.com>", Time: t0.Add(time.Minute), Subject: "billing: hourly",
		Link: "https://example.com/blob/" + first + "/projects/billing.yaml"}
	if p.Revision != first || p.Commit == nil || *p.Commit != want || p.File != "projects/billing.yaml" {
		t.Fatalf("after the first commit: %+v (commit %+v); want it to run %+v", p, p.Commit, want)
	}
	e.wantState("billing/report", scheduled, "")

	second := r.commit("billing: daily", map[string]string{"projects/billing.yaml": noopJob("@daily")})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.record("billing"); p.Revision != second || e.definition("billing/report").Schedule != "@daily" {
		t.Fatalf("after a push: revision %s, schedule %q; want %s, @daily", p.Revision, e.definition("billing/report").Schedule, second)
	}

	bad := r.commit("billing: oops", map[string]string{"projects/billing.yaml": noopJob("61 * * * *")})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	p = e.record("billing")
	if p.Revision != second || p.ErrorCommit != bad || e.definition("billing/report").Schedule != "@daily" {
		t.Errorf("after an invalid commit: %+v; want %s running and the error of %s", p, second, bad)
	}
	for _, part := range []string{"projects/billing.yaml:3", "jobs[0].schedule", "commit " + bad[:12], "billing: oops"} {
		if !strings.Contains(p.Error, part) {
			t.Errorf("error %q does not say %q", p.Error, part)
		}
	}
}

// TestGitRefreshRefusesACommitThatRemovesEveryProject: a commit that
// leaves the path empty (a wrong path, an emptied branch) disables
// nothing and is reported; one that removes some projects disables those.
func TestGitRefreshRefusesACommitThatRemovesEveryProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := newGitRepo(t)
	r.commit("two projects", map[string]string{"projects/billing.yaml": noopJob("@hourly"), "projects/search.yaml": noopJob("@daily")})
	fresh := e.gitRefresher(serveGit(t, r))
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	empty := r.commit("move everything away", map[string]string{"projects/billing.yaml": "", "projects/search.yaml": "", "elsewhere/billing.yaml": noopJob("@hourly")})
	err := fresh.Refresh(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "holds no project config") || !strings.Contains(err.Error(), empty[:12]) {
		t.Errorf("Refresh of an emptying commit: %v; want it refused, naming the commit", err)
	}
	e.wantState("billing/report", scheduled, "")
	e.wantState("search/report", scheduled, "")
	if p := e.record("billing"); !strings.Contains(p.Error, "holds no project config") {
		t.Errorf("billing's record: %+v; want the refusal in it", p)
	}

	r.commit("billing only", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.wantState("billing/report", scheduled, "")
	e.wantState("search/report", disabled, "removed from config")
}

// TestGitRefreshRefusesAForcePushBackToAnOlderCommit: the ref forced back
// to a commit older than the one running changes nothing and is reported.
func TestGitRefreshRefusesAForcePushBackToAnOlderCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := newGitRepo(t)
	old := r.commit("hourly", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	newer := r.commit("daily", map[string]string{"projects/billing.yaml": noopJob("@daily")})
	fresh := e.gitRefresher(serveGit(t, r))
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	r.git("reset", "-q", "--hard", old)
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	p := e.record("billing")
	if p.Revision != newer || e.definition("billing/report").Schedule != "@daily" || !strings.Contains(p.Error, "older commit") || p.ErrorCommit != old {
		t.Errorf("after a force-push back: %+v; want %s running and the push refused", p, newer)
	}
}

// TestGitRefreshOfARemoteThatFailsChangesNothing: a remote that refuses
// the credentials leaves every project running as it was, with the
// failure in its record, written once.
func TestGitRefreshOfARemoteThatFailsChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := newGitRepo(t)
	sha := r.commit("hourly", map[string]string{"projects/billing.yaml": noopJob("@hourly")})
	srv := serveGit(t, r)
	if err := e.gitRefresher(srv).Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	src := gitSource(t, config.GitOptions{URL: srv.url(), Path: "projects", Auth: nil})
	fresh := config.NewSourceRefresher([]config.Source{src}, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock})
	// The first pass of a new process knows billing only from the store.
	if err := fresh.Refresh(e.ctx); err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Errorf("Refresh with no credentials: %v; want the remote's refusal", err)
	}
	e.wantState("billing/report", scheduled, "")
	if p := e.record("billing"); p.Revision != sha {
		t.Errorf("billing's record: %+v; want %s still running", p, sha)
	}
}

// TestRefreshOfManyReposHoldsEachToItsProjects: with a repo per project
// (--projects-file), a repo that fails holds up only its project, and a
// project found in two repos is refused in both, keeping what it runs.
func TestRefreshOfManyReposHoldsEachToItsProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	billing, search := newGitRepo(t), newGitRepo(t)
	billing.commit("billing", map[string]string{"billing.yaml": noopJob("@hourly")})
	search.commit("search", map[string]string{"search.yaml": noopJob("@daily")})
	srv := serveGit(t, search)
	billingSrc := gitSource(t, config.GitOptions{URL: billing.fileURL(), Projects: []string{"billing"}})
	searchSrc := gitSource(t, config.GitOptions{URL: srv.url(), Auth: goodAuth, Projects: []string{"search"}})
	fresh := config.NewSourceRefresher([]config.Source{billingSrc, searchSrc}, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.wantState("billing/report", scheduled, "")
	e.wantState("search/report", scheduled, "")

	// search's repo goes away; billing's moves on.
	srv.Close()
	billing.commit("billing daily", map[string]string{"billing.yaml": noopJob("@daily")})
	if err := fresh.Refresh(e.ctx); err == nil || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("Refresh with search's repo down: %v; want an error naming it", err)
	}
	if d := e.definition("billing/report"); d.Schedule != "@daily" {
		t.Errorf("billing's job has schedule %q; want its repo's new @daily", d.Schedule)
	}
	e.wantState("search/report", scheduled, "")
	if p := e.record("search"); p.Error == "" || p.Revision == "" {
		t.Errorf("search's record: %+v; want its revision running and its repo's failure", p)
	}

	// Two sources holding one project: refused in both, billing runs on.
	twice := config.NewSourceRefresher([]config.Source{billingSrc, gitSource(t, config.GitOptions{URL: billing.fileURL()})}, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock})
	billing.commit("billing weekly", map[string]string{"billing.yaml": noopJob("@weekly")})
	if err := twice.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.record("billing"); !strings.Contains(p.Error, "in two config sources") || e.definition("billing/report").Schedule != "@daily" {
		t.Errorf("billing in two sources: %+v, schedule %q; want it refused and @daily running", p, e.definition("billing/report").Schedule)
	}
}
