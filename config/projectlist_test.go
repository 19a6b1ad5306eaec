package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// listRefresher is a refresher of the projects list sundial/projects.yaml
// in the repo srv serves, each project read over file:// (no credentials).
func (e *env) listRefresher(srv *gitServer) *config.Refresher {
	e.t.Helper()
	list, err := config.NewProjectList(config.GitOptions{URL: srv.url(), File: "sundial/projects.yaml", Auth: goodAuth}, config.GitOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return config.NewListRefresher(list, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock})
}

// listing is a projects file naming each repo's project.
func listing(repos map[string]*gitRepo, extra string) string {
	s := "projects:\n"
	for _, id := range []string{"ads", "billing", "search"} {
		if r := repos[id]; r != nil {
			s += fmt.Sprintf("  - id: %s\n    repo: %s\n", id, r.fileURL())
		}
	}
	return s + extra
}

// TestProjectListInARepoIsFollowedAndRefusedWhole: a projects file kept
// in a repo is read at each refresh (fetched only when its commit moved);
// a project dropped from it is disabled; a revision of it that is invalid,
// or that lists none of the projects it listed, is refused whole with an
// error naming the file, line and commit, and the last good list keeps
// running (or, in an instance that has none, nothing changes).
func TestProjectListInARepoIsFollowedAndRefusedWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	billing, search, ads := newGitRepo(t), newGitRepo(t), newGitRepo(t)
	billing.commit("billing", map[string]string{"billing.yaml": noopJob("@hourly")})
	search.commit("search", map[string]string{"search.yaml": noopJob("@daily")})
	ads.commit("ads", map[string]string{"ads.yaml": noopJob("@daily")})
	lists := newGitRepo(t)
	lists.commit("billing and search", map[string]string{"sundial/projects.yaml": listing(map[string]*gitRepo{"billing": billing, "search": search}, "")})
	srv := serveGit(t, lists)
	fresh := e.listRefresher(srv)
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.wantState("billing/report", scheduled, "")
	e.wantState("search/report", scheduled, "")
	fetches := srv.fetched()
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	if srv.fetched() != fetches {
		t.Errorf("an unchanged list was fetched again: %d fetches, want %d", srv.fetched(), fetches)
	}

	lists.commit("search leaves", map[string]string{"sundial/projects.yaml": listing(map[string]*gitRepo{"billing": billing}, "")})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.wantState("billing/report", scheduled, "")
	e.wantState("search/report", disabled, "removed from config")

	// Line 5 is the entry with the unknown field; ads, listed in the same
	// revision, is not applied, nor is billing dropped.
	bad := lists.commit("ads, with a typo", map[string]string{"sundial/projects.yaml": "projects:\n  - id: ads\n    repo: " + ads.fileURL() + "\n  - id: billing\n    rpo: " + billing.fileURL() + "\n"})
	err := fresh.Refresh(e.ctx)
	for _, part := range []string{"sundial/projects.yaml:5", "projects[1].rpo", "commit " + bad[:12], "last good list"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("Refresh of an invalid list: %v; want an error saying %q", err, part)
		}
	}
	e.wantState("billing/report", scheduled, "")
	if p := e.record("ads"); p.Revision != "" {
		t.Errorf("ads, listed only by the refused list, runs %+v", p)
	}

	emptied := lists.commit("ads only", map[string]string{"sundial/projects.yaml": listing(map[string]*gitRepo{"ads": ads}, "")})
	err = fresh.Refresh(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "lists none of the projects running (billing)") || !strings.Contains(err.Error(), emptied[:12]) {
		t.Errorf("Refresh of a list dropping every project: %v; want it refused, naming the commit", err)
	}
	// An instance just started, with no last good list of its own, goes
	// by what runs in the store and refuses it too.
	if err := e.listRefresher(srv).Refresh(e.ctx); err == nil || !strings.Contains(err.Error(), "lists none of the projects running (billing)") {
		t.Errorf("a fresh refresher's Refresh of a list dropping every project: %v; want it refused", err)
	}
	e.wantState("billing/report", scheduled, "")
	if p := e.record("ads"); p.Revision != "" {
		t.Errorf("ads, listed only by the refused list, runs %+v", p)
	}

	lists.commit("ads joins", map[string]string{"sundial/projects.yaml": listing(map[string]*gitRepo{"ads": ads, "billing": billing}, "")})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.wantState("ads/report", scheduled, "")
	e.wantState("billing/report", scheduled, "")
}

// TestProjectListNeverReadChangesNothing: a list whose first read fails
// (its file missing at the ref's commit) starts nothing and says why.
func TestProjectListNeverReadChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	lists := newGitRepo(t)
	lists.commit("elsewhere", map[string]string{"other/projects.yaml": "projects: []\n"})
	err := e.listRefresher(serveGit(t, lists)).Refresh(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "sundial/projects.yaml at commit") {
		t.Errorf("Refresh of a list not in its repo: %v; want an error naming the file and commit", err)
	}
}

// TestProjectListMovesAProjectToAnotherRepo: a project whose entry moves
// to another repo runs that repo's commit, though it is older than the one
// it ran (commits of two repos say nothing of which is newer), and the
// new repo's next commit follows.
func TestProjectListMovesAProjectToAnotherRepo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old, moved := newGitRepo(t), newGitRepo(t)
	moved.commit("billing, moved", map[string]string{"billing.yaml": noopJob("@hourly")})
	old.commit("billing", map[string]string{"billing.yaml": noopJob("@hourly")})
	running := old.commit("billing daily", map[string]string{"billing.yaml": noopJob("@hourly")})
	lists := newGitRepo(t)
	lists.commit("billing", map[string]string{"sundial/projects.yaml": listing(map[string]*gitRepo{"billing": old}, "")})
	fresh := e.listRefresher(serveGit(t, lists))
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.record("billing"); p.Revision != running {
		t.Fatalf("billing runs %s; want %s", p.Revision, running)
	}

	lists.commit("billing moves", map[string]string{"sundial/projects.yaml": listing(map[string]*gitRepo{"billing": moved}, "")})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.record("billing"); p.Revision != moved.git("rev-parse", "HEAD") || p.Error != "" {
		t.Fatalf("after the move billing runs %s (error %q); want the new repo's commit", p.Revision, p.Error)
	}
	next := moved.commit("billing weekly", map[string]string{"billing.yaml": noopJob("@weekly")})
	if err := fresh.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	if p := e.record("billing"); p.Revision != next || e.definition("billing/report").Schedule != "@weekly" {
		t.Errorf("billing runs %s, schedule %q; want %s, @weekly", p.Revision, e.definition("billing/report").Schedule, next)
	}
}
