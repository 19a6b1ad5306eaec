package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A running server follows its config directory: an edit takes effect at
// the next refresh (new jobs start, changed ones call their new URL,
// removed ones become DISABLED); an invalid edit leaves the last good
// revision running, its error shown for that project only, and SIGHUP
// reads the directory at once.
func TestServeFollowsConfigEdits(t *testing.T) {
	eachShape(t, func(t *testing.T, storage []string) {
		recv := newReceiver(t, 0)
		dir := t.TempDir()
		configs := filepath.Join(dir, "configs")
		mkdir(t, configs)
		job := func(id, path string) string {
			return fmt.Sprintf("  - id: %s\n    schedule: \"* * * * * *\"\n    url_fetch:\n      url: %s%s\n", id, recv.URL, path)
		}
		writeConfig(t, configs, "p", "jobs:\n"+job("a", "/a1"))
		writeConfig(t, configs, "q", "jobs:\n"+job("c", "/c"))
		const refresh = 2 * time.Second
		s := serve(t, append(storage, "--config-dir", configs, "--config-refresh", refresh.String())...)
		recv.waitFor(t, time.Minute, "job a on its first URL", hitPath("/a1", time.Time{}))

		// A valid edit: a calls a new URL and b is new. It takes effect at the
		// next periodic refresh, without a signal.
		edited := time.Now()
		writeConfig(t, configs, "p", "jobs:\n"+job("a", "/a2")+job("b", "/b"))
		recv.waitFor(t, refresh+30*time.Second, "the edit: a on its new URL and the new job b", func(hits []hit) bool {
			return hitPath("/a2", edited)(hits) && hitPath("/b", edited)(hits)
		})
		if status := projectConfig(t, s, "p"); status.Error != "" {
			t.Errorf("project p after a valid edit: config error %q", status.Error)
		}

		// An invalid edit: p keeps running a and b as they were, and says why
		// the new revision is refused; q is untouched.
		writeConfig(t, configs, "p", "jobs:\n"+job("a", "/a3")+"  - id: b\n    schedule: \"61 * * * *\"\n    noop: {}\n")
		s.hup(t)
		var status configStatus
		waitUntil(t, 30*time.Second, "the invalid revision's error", func() bool {
			status = projectConfig(t, s, "p")
			return status.Error != ""
		})
		if want := filepath.Join(configs, "p.yaml") + ":7"; !strings.Contains(status.Error, want) || !strings.Contains(status.Error, "schedule") {
			t.Errorf("the error of the invalid revision is %q; want it to name %s and the field schedule", status.Error, want)
		}
		if q := projectConfig(t, s, "q"); q.Error != "" {
			t.Errorf("project q has config error %q after p's invalid edit", q.Error)
		}
		refused := time.Now()
		recv.waitFor(t, 30*time.Second, "a, b and c still running their last good revision", func(hits []hit) bool {
			return hitPath("/a2", refused)(hits) && hitPath("/b", refused)(hits) && hitPath("/c", refused)(hits)
		})
		if hits, _ := recv.snapshot(); hitPath("/a3", time.Time{})(hits) {
			t.Error("the invalid revision's URL was called")
		}

		// A valid edit that removes b: b is DISABLED, its history kept.
		writeConfig(t, configs, "p", "jobs:\n"+job("a", "/a2"))
		s.hup(t)
		// The project's record is written once its jobs are in line: wait
		// for both.
		var b jobView
		waitUntil(t, 30*time.Second, "job b to be disabled and the revision recorded", func() bool {
			b = getJob(t, s, "p", "b")
			return b.State == "DISABLED" && projectConfig(t, s, "p").Error == ""
		})
		if b.LastInvocation == nil {
			t.Error("job b's history is gone after its removal")
		}
		s.stop(t)
	})
}

// hitPath says whether a request for path arrived at or after since.
func hitPath(path string, since time.Time) func([]hit) bool {
	return func(hits []hit) bool {
		for _, h := range hits {
			if h.path == path && !h.at.Before(since) {
				return true
			}
		}
		return false
	}
}

// hup sends SIGHUP: read the config directory now.
func (s *runningServer) hup(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

type configStatus struct {
	Revision string `json:"revision"`
	Error    string `json:"error"`
}

// projectConfig reads a project's config status from the API.
func projectConfig(t *testing.T, s *runningServer, project string) configStatus {
	t.Helper()
	var out struct {
		Projects []struct {
			Project string       `json:"project"`
			Config  configStatus `json:"config"`
		} `json:"projects"`
	}
	s.getJSON(t, "/api/v1/projects", &out)
	for _, p := range out.Projects {
		if p.Project == project {
			return p.Config
		}
	}
	t.Fatalf("project %s is not listed", project)
	return configStatus{}
}

type jobView struct {
	State          string          `json:"state"`
	LastInvocation json.RawMessage `json:"last_invocation"`
}

func getJob(t *testing.T, s *runningServer, project, job string) jobView {
	t.Helper()
	var out jobView
	s.getJSON(t, "/api/v1/projects/"+project+"/jobs/"+job, &out)
	return out
}

// getJSON reads one API response, failing the test on anything but 200.
func (s *runningServer) getJSON(t *testing.T, path string, out any) {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// waitUntil polls cond until it holds, failing the test after limit: for
// state the server does not announce.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: still waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
