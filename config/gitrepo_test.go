package config_test

import (
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// gitHTTPBackend is git's smart HTTP server, which the tests host.
const gitHTTPBackend = "/usr/lib/git-core/git-http-backend"

// gitRepo is a real repo, made and changed with the git CLI, as a project
// owner's pushes leave the remote: each commit is on branch main of the
// repo the source fetches from.
type gitRepo struct {
	t    *testing.T
	dir  string
	mu   sync.Mutex
	made int // commits so far, which date the next
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI on this machine")
	}
	r := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), "configs")}
	r.git("init", "-q", "-b", "main", r.dir)
	return r
}

// git runs git in the repo and returns its output.
func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	if args[0] == "init" {
		cmd = exec.Command("git", args...)
	}
	// Commits are dated one minute apart from t0, whatever the machine's
	// clock, so that their order is the order they were made.
	at := t0.Add(time.Duration(r.made) * time.Minute).Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada Owner", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Owner", "GIT_COMMITTER_EMAIL=ada@example.com",
		"GIT_AUTHOR_DATE="+at, "GIT_COMMITTER_DATE="+at, "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (an empty content removes one) on main and commits
// them with subject; it returns the commit's sha.
func (r *gitRepo) commit(subject string, files map[string]string) string {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, content := range files {
		p := filepath.Join(r.dir, name)
		if content == "" {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.made++
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", subject)
	return r.git("rev-parse", "HEAD")
}

// fileURL is the repo's file:// URL.
func (r *gitRepo) fileURL() string { return "file://" + r.dir }

// gitServer serves the repos in a directory over git's smart HTTP
// protocol (git http-backend, as a CGI), behind basic auth, and counts
// the fetches (upload-pack POSTs) it answers.
type gitServer struct {
	*httptest.Server
	mu      sync.Mutex
	fetches int
}

const (
	gitUser  = "sundial"
	gitToken = "s3cret-token"
)

func serveGit(t *testing.T, r *gitRepo) *gitServer {
	t.Helper()
	if _, err := os.Stat(gitHTTPBackend); err != nil {
		t.Skipf("no %s on this machine", gitHTTPBackend)
	}
	backend := &cgi.Handler{Path: gitHTTPBackend, Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(r.dir), "GIT_HTTP_EXPORT_ALL=1"}}
	s := &gitServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != gitUser || p != gitToken {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/git-upload-pack") {
			s.mu.Lock()
			s.fetches++
			s.mu.Unlock()
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(s.Close)
	return s
}

// url is the served repo's URL.
func (s *gitServer) url() string { return s.URL + "/configs" }

func (s *gitServer) fetched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// hangingServer accepts requests and answers none until the test ends.
func hangingServer(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-done:
		case <-req.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); s.Close() })
	return s.URL + "/configs"
}

// noopJob is a project config of one noop job with schedule.
func noopJob(schedule string) string {
	return fmt.Sprintf("jobs:\n  - id: report\n    schedule: %q\n    noop: {}\n", schedule)
}
