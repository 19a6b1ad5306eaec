package config_test

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
)

func gitSource(t *testing.T, opts config.GitOptions) *config.GitSource {
	t.Helper()
	s, err := config.NewGitSource(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var goodAuth = &githttp.BasicAuth{Username: gitUser, Password: gitToken}

// TestGitSourceReadsTheRefsCommitOverHTTPAndFile: the files under the
// path at the ref's commit, each a project, with the commit's sha,
// author, time and subject and a link to the file, over smart HTTP with
// basic auth and over file://.
func TestGitSourceReadsTheRefsCommitOverHTTPAndFile(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	sha := r.commit("billing: hourly report", map[string]string{
		"projects/billing.yaml": noopJob("@hourly"),
		"projects/search.yml":   noopJob("@daily"),
		"projects/README.md":    "not a config",
		"elsewhere.yaml":        noopJob("@daily"),
	})
	srv := serveGit(t, r)
	for _, opts := range []config.GitOptions{
		{URL: srv.url(), Path: "projects/", Auth: goodAuth, Link: "https://example.com/configs/blob/{commit}/{path}"},
		{URL: r.fileURL(), Path: "projects", Link: "https://example.com/configs/blob/{commit}/{path}"},
	} {
		s, err := gitSource(t, opts).Read(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", opts.URL, err)
		}
		want := engine.Commit{SHA: sha, Author: "Ada Owner <ada@example.com>", Time: t0.Add(time.Minute), Subject: "billing: hourly report"}
		if s.Commit == nil || *s.Commit != want {
			t.Errorf("%s: commit %+v; want %+v", opts.URL, s.Commit, want)
		}
		if len(s.Files) != 2 || s.Files[0].Project != "billing" || s.Files[0].Path != "projects/billing.yaml" ||
			string(s.Files[0].Data) != noopJob("@hourly") || s.Files[1].Project != "search" || s.Files[0].Err != nil {
			t.Fatalf("%s: files %+v; want billing's and search's", opts.URL, s.Files)
		}
		if l := s.Files[0].Link; l != "https://example.com/configs/blob/"+sha+"/projects/billing.yaml" {
			t.Errorf("%s: link %q", opts.URL, l)
		}
	}
}

// TestGitSourceFetchesOnlyANewCommit: polling an unchanged repo asks for
// the ref's commit and fetches nothing; a push is fetched once.
func TestGitSourceFetchesOnlyANewCommit(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.commit("first", map[string]string{"billing.yaml": noopJob("@hourly")})
	srv := serveGit(t, r)
	src := gitSource(t, config.GitOptions{URL: srv.url(), Auth: goodAuth})
	for range 3 {
		if _, err := src.Read(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.fetched(); n != 1 {
		t.Errorf("three reads of one commit fetched %d times; want 1", n)
	}
	second := r.commit("second", map[string]string{"billing.yaml": noopJob("@daily")})
	s, err := src.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.Commit.SHA != second || string(s.Files[0].Data) != noopJob("@daily") || srv.fetched() != 2 {
		t.Errorf("after a push: commit %s, %q, %d fetches; want %s, its file, 2", s.Commit.SHA, s.Files[0].Data, srv.fetched(), second)
	}
}

// TestGitSourceReadsATagAndAnotherBranch: the ref may be a branch other
// than main or a tag, annotated or not.
func TestGitSourceReadsATagAndAnotherBranch(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	tagged := r.commit("release", map[string]string{"billing.yaml": noopJob("@hourly")})
	r.git("tag", "-a", "-m", "v1", "v1")
	r.git("branch", "stable")
	r.commit("next", map[string]string{"billing.yaml": noopJob("@daily")})
	for _, ref := range []string{"refs/tags/v1", "stable"} {
		s, err := gitSource(t, config.GitOptions{URL: r.fileURL(), Ref: ref}).Read(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if s.Commit.SHA != tagged || string(s.Files[0].Data) != noopJob("@hourly") {
			t.Errorf("%s: commit %s; want %s", ref, s.Commit.SHA, tagged)
		}
	}
}

// TestGitSourceFailuresAreErrors: wrong credentials, a deleted ref, a
// server that never answers and a fetch past the bound are errors that
// say so, and yield no files.
func TestGitSourceFailuresAreErrors(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.commit("first", map[string]string{"billing.yaml": noopJob("@hourly")})
	srv := serveGit(t, r)

	random := make([]byte, 2<<20)
	rand.Read(random)
	huge := newGitRepo(t)
	huge.commit("a big file beside the configs", map[string]string{"billing.yaml": noopJob("@hourly"), "blob.bin": string(random)})
	// Zeros pack to almost nothing and inflate to the whole size.
	bomb := newGitRepo(t)
	bomb.commit("zeros", map[string]string{"billing.yaml": noopJob("@hourly"), "zeros.bin": strings.Repeat("\x00", 8<<20)})

	for _, c := range []struct {
		name string
		opts config.GitOptions
		want func(error) bool
		says string
	}{
		{"no credentials", config.GitOptions{URL: srv.url()},
			func(err error) bool { return errors.Is(err, transport.ErrAuthenticationRequired) }, "authentication required"},
		{"wrong credentials", config.GitOptions{URL: srv.url(), Auth: &githttp.BasicAuth{Username: gitUser, Password: "guess"}},
			func(err error) bool { return errors.Is(err, transport.ErrAuthenticationRequired) }, "authentication required"},
		{"a ref the remote lacks", config.GitOptions{URL: srv.url(), Ref: "gone", Auth: goodAuth},
			func(error) bool { return true }, "has no refs/heads/gone"},
		{"a server that hangs", config.GitOptions{URL: hangingServer(t), Timeout: 100 * time.Millisecond},
			func(error) bool { return true }, "no answer within 100ms"},
		{"a pack past the bound", config.GitOptions{URL: huge.fileURL(), MaxBytes: 1 << 20},
			func(err error) bool { return errors.Is(err, config.ErrRepoTooLarge) }, "larger than the bound"},
		{"objects inflating past the bound", config.GitOptions{URL: bomb.fileURL(), MaxBytes: 1 << 20},
			func(err error) bool { return errors.Is(err, config.ErrRepoTooLarge) }, "larger than the bound"},
	} {
		s, err := gitSource(t, c.opts).Read(t.Context())
		if err == nil || !c.want(err) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.says)
		}
		if s.Files != nil || s.Commit != nil {
			t.Errorf("%s: yielded %+v", c.name, s)
		}
	}

	// The same repo deletes its branch after a good read.
	src := gitSource(t, config.GitOptions{URL: srv.url(), Auth: goodAuth})
	if _, err := src.Read(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.git("checkout", "-q", "-b", "other")
	r.git("branch", "-D", "main")
	if _, err := src.Read(t.Context()); err == nil || !strings.Contains(err.Error(), "has no refs/heads/main") {
		t.Errorf("after the branch was deleted: %v; want an error naming it", err)
	}
}

// TestNewGitSourceRefusesBadOptions: what cannot name a repo, a ref or a
// path inside the repo is refused before any remote is reached.
func TestNewGitSourceRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []config.GitOptions{
		{},
		{URL: "ftp://example.com/configs"},
		{URL: "https://user:pass@example.com/configs"},
		{URL: "https://example.com/configs", Ref: "refs/notes/x"},
		{URL: "https://example.com/configs", Ref: "a..b"},
		{URL: "https://example.com/configs", Path: "../up"},
		{URL: "https://example.com/configs", Path: "/abs"},
		{URL: "https://example.com/configs", Link: "https://example.com/no-placeholder"},
		{URL: "https://example.com/configs", Projects: []string{"Bad Id"}},
	} {
		if _, err := config.NewGitSource(o); err == nil {
			t.Errorf("NewGitSource(%+v) succeeded", o)
		}
	}
}
