package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// configRepo is a config repo made with the git CLI; its commits are
// what a push leaves on the remote the server reads (file://).
type configRepo struct {
	t   *testing.T
	dir string
}

func newConfigRepo(t *testing.T) *configRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI on this machine")
	}
	r := &configRepo{t: t, dir: filepath.Join(t.TempDir(), "configs")}
	r.git("init", "-q", "-b", "main", r.dir)
	return r
}

func (r *configRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	if args[0] != "init" {
		cmd = exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	}
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes (or, for "", removes) projects/<project>.yaml files and
// commits them; it returns the commit's sha.
func (r *configRepo) commit(subject string, projects map[string]string) string {
	r.t.Helper()
	mkdir(r.t, filepath.Join(r.dir, "projects"))
	for p, content := range projects {
		name := filepath.Join(r.dir, "projects", p+".yaml")
		if content == "" {
			os.Remove(name)
			continue
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", subject)
	return r.git("rev-parse", "HEAD")
}

// reimport posts to the reimport endpoint, signed like GitHub's webhook
// when secret is not nil; it returns the status and body.
func (s *runningServer) reimport(t *testing.T, secret []byte) (int, string) {
	t.Helper()
	body := `{"ref":"refs/heads/main"}`
	req, err := http.NewRequest("POST", "http://"+s.addr+"/api/v1/configs:reimport", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != nil {
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(body))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A server reading a config repo runs the ref's commit; a pushed commit
// takes effect at once through the signed webhook; an invalid commit keeps
// the last good one running, and the API shows file:line: field and the
// commit; a commit that empties the repo disables nothing.
func TestServeFollowsAConfigRepo(t *testing.T) {
	t.Parallel()
	recv := newReceiver(t, 0)
	dir := t.TempDir()
	repo := newConfigRepo(t)
	job := func(id, path string) string {
		return fmt.Sprintf("  - id: %s\n    schedule: \"* * * * * *\"\n    url_fetch:\n      url: %s%s\n", id, recv.URL, path)
	}
	first := repo.commit("p: a", map[string]string{"p": "jobs:\n" + job("a", "/a1"), "q": "jobs:\n" + job("c", "/c")})
	secret := []byte("webhook-secret-0123456789")
	secretFile := filepath.Join(dir, "hook")
	if err := os.WriteFile(secretFile, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	// An hour between refreshes: what follows the first pass comes
	// through the webhook.
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--config-repo", "file://"+repo.dir, "--config-path", "projects",
		"--config-refresh", "1h", "--config-webhook-secret-file", secretFile)
	recv.waitFor(t, time.Minute, "job a of the first commit", hitPath("/a1", time.Time{}))
	if status := projectConfig(t, s, "p"); status.Revision != first {
		t.Errorf("project p runs %q; want the commit %s", status.Revision, first)
	}

	second := repo.commit("p: a moves", map[string]string{"p": "jobs:\n" + job("a", "/a2")})
	pushed := time.Now()
	if code, body := s.reimport(t, secret); code != http.StatusOK {
		t.Fatalf("signed webhook: %d %s", code, body)
	}
	recv.waitFor(t, 30*time.Second, "job a on the pushed commit's URL", hitPath("/a2", pushed))
	if status := projectConfig(t, s, "p"); status.Revision != second {
		t.Errorf("project p runs %q; want the pushed commit %s", status.Revision, second)
	}

	bad := repo.commit("p: oops", map[string]string{"p": "jobs:\n" + job("a", "/a3") + "  - id: b\n    schedule: \"61 * * * *\"\n    noop: {}\n"})
	// The local caller is the administrator. The refused commit is
	// answered 422, naming the project and its error.
	if code, body := s.reimport(t, nil); code != http.StatusUnprocessableEntity || !strings.Contains(body, `"refused"`) || !strings.Contains(body, "projects/p.yaml:7") {
		t.Fatalf("reimport of an invalid commit: %d %s; want 422 naming projects/p.yaml:7", code, body)
	}
	status := projectConfig(t, s, "p")
	for _, part := range []string{"projects/p.yaml:7", "schedule", "commit " + bad[:12]} {
		if !strings.Contains(status.Error, part) {
			t.Errorf("the invalid commit's error %q does not say %q", status.Error, part)
		}
	}
	if status.Revision != second {
		t.Errorf("after an invalid commit project p runs %q; want %s still", status.Revision, second)
	}
	// sundial config status prints the same: each project's commit, its
	// author and subject, and p's error with the commit it refused.
	// It exits 1, saying which project's revision is refused.
	code, out, errOut := sundial("config", "status", "--server", "http://"+s.addr)
	if code != 1 || !strings.Contains(errOut, "the newest revision of 1 project is refused: p") {
		t.Fatalf("sundial config status: %d %s; want exit 1 naming p", code, errOut)
	}
	for _, re := range []string{
		`(?m)^p\s+1\s+` + second[:12] + `\s+\d{4}-\d\d-\d\dT\S+\s+Ada <ada@example.com>\s+p: a moves$`,
		`(?m)^q\s+1\s+` + first[:12] + `\s+\S+\s+Ada <ada@example.com>\s+p: a$`,
		`(?m)^p: newest revision commit ` + bad[:12] + ` refused at \S+; revision ` + second[:12] + ` keeps running:\n  projects/p.yaml:7: .*schedule`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("sundial config status:\n%s\nwant a match of %s", out, re)
		}
	}
	if code, out, _ := sundial("config", "status", "--json", "--server", "http://"+s.addr); code != 1 || !strings.Contains(out, `"error_commit": "`+bad+`"`) {
		t.Errorf("sundial config status --json: %d %s; want exit 1 and the API's JSON with error_commit", code, out)
	}

	repo.commit("everything away", map[string]string{"p": "", "q": ""})
	if code, body := s.reimport(t, secret); code != http.StatusBadGateway || !strings.Contains(body, "holds no project config") {
		t.Errorf("reimport of an emptied repo: %d %s; want it refused", code, body)
	}
	emptied := time.Now()
	recv.waitFor(t, 30*time.Second, "a and c still running after the repo was emptied", func(hits []hit) bool {
		return hitPath("/a2", emptied)(hits) && hitPath("/c", emptied)(hits)
	})
	if a := getJob(t, s, "p", "a"); a.State == "DISABLED" {
		t.Error("job a was disabled by a commit that emptied the repo")
	}
	s.stop(t)
}

// A server whose projects list is itself in a repo (--projects-repo) reads
// the list again at each refresh: a project dropped from it is disabled,
// and an invalid revision of the list is refused whole, naming the file,
// line and commit, while the last good list keeps running.
func TestServeFollowsAProjectsListInARepo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	configs, lists := newConfigRepo(t), newConfigRepo(t)
	configs.commit("p and q", map[string]string{"p": "jobs:\n  - id: a\n    schedule: \"@daily\"\n    noop: {}\n", "q": "jobs:\n  - id: c\n    schedule: \"@daily\"\n    noop: {}\n"})
	list := func(subject, content string) string {
		t.Helper()
		mkdir(t, filepath.Join(lists.dir, "sundial"))
		if err := os.WriteFile(filepath.Join(lists.dir, "sundial", "projects.yaml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		lists.git("add", "-A")
		lists.git("commit", "-q", "-m", subject)
		return lists.git("rev-parse", "HEAD")
	}
	entry := func(id string) string {
		return fmt.Sprintf("  - id: %s\n    repo: file://%s\n    path: projects/\n", id, configs.dir)
	}
	list("p and q", "projects:\n"+entry("p")+entry("q"))
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--projects-repo", "file://"+lists.dir, "--projects-file", "sundial/projects.yaml", "--config-refresh", "1h")
	waitUntil(t, time.Minute, "p and q scheduled", func() bool {
		return s.jobState(t, "p", "a") == "SCHEDULED" && s.jobState(t, "q", "c") == "SCHEDULED"
	})

	list("q leaves", "projects:\n"+entry("p"))
	if code, body := s.reimport(t, nil); code != http.StatusOK {
		t.Fatalf("reimport: %d %s", code, body)
	}
	if c := getJob(t, s, "q", "c"); c.State != "DISABLED" {
		t.Errorf("job q/c is %s after q left the list; want DISABLED", c.State)
	}

	bad := list("typo", "projects:\n"+entry("p")+"  - id: q\n    repo: file://"+configs.dir+"\n    pth: projects/\n")
	code, body := s.reimport(t, nil)
	for _, part := range []string{"sundial/projects.yaml:", "projects[1].pth", "commit " + bad[:12]} {
		if code != http.StatusBadGateway || !strings.Contains(body, part) {
			t.Errorf("reimport of an invalid list: %d %s; want it refused, saying %q", code, body, part)
		}
	}
	if a, c := getJob(t, s, "p", "a"), getJob(t, s, "q", "c"); a.State != "SCHEDULED" || c.State != "DISABLED" {
		t.Errorf("after an invalid list p/a is %s and q/c %s; want the last good list running (SCHEDULED, DISABLED)", a.State, c.State)
	}
	s.stop(t)
}

// jobState is a job's state, or "" while the server has no such job.
func (s *runningServer) jobState(t *testing.T, project, job string) string {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/api/v1/projects/" + project + "/jobs/" + job)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return ""
	}
	return getJob(t, s, project, job).State
}

// A project's revision is the commit that last changed its file, across
// restarts: after a commit that changes only q, and a restart, p still
// runs the commit that last changed p. Before, a restart attributed every
// project of a shared repo to the newest commit.
func TestServeKeepsEachProjectsCommitAcrossARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo := newConfigRepo(t)
	job := "jobs:\n  - id: a\n    schedule: triggered\n    noop: {}\n"
	first := repo.commit("p and q", map[string]string{"p": job, "q": job})
	args := []string{"--db", filepath.Join(dir, "sundial.db"), "--config-repo", "file://" + repo.dir, "--config-path", "projects", "--config-refresh", "1h"}
	s := serve(t, args...)
	waitForJob(t, s, "p", "a")
	waitForJob(t, s, "q", "a")
	second := repo.commit("q only", map[string]string{"q": job + "  - id: b\n    schedule: triggered\n    noop: {}\n"})
	if code, body := s.reimport(t, nil); code != http.StatusOK {
		t.Fatalf("reimport: %d %s", code, body)
	}
	if p, q := projectConfig(t, s, "p").Revision, projectConfig(t, s, "q").Revision; p != first || q != second {
		t.Fatalf("after the second commit p runs %s and q %s; want %s and %s", p, q, first, second)
	}
	s.stop(t)
	s = serve(t, args...)
	// The first pass after the restart reads p: applied again, or found
	// unchanged.
	waitUntil(t, time.Minute, "the restarted server to read p", func() bool {
		for line := range strings.Lines(s.log.String()) {
			if strings.Contains(line, `"project":"p"`) && (strings.Contains(line, `"config applied"`) || strings.Contains(line, `"config unchanged"`)) {
				return true
			}
		}
		return false
	})
	if p := projectConfig(t, s, "p").Revision; p != first {
		t.Errorf("after a restart p runs %s; want %s, the commit that last changed its file", p, first)
	}
}
