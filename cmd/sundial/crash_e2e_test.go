package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One job whose every launch kills the server (as a command that takes the
// machine's memory would get it OOM-killed) must not keep it in a crash
// loop. The server is restarted each time it dies, as a supervisor would:
// an idempotent job's ambiguous launch is retried as the next attempt, so
// max_attempts bounds the launches, and a job removed from the config after
// the first crash launches nothing more. Before, each start re-sent the same
// attempt without end.
func TestServeEndsACrashLoopOfOneJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		maxAttempts int
		remove      bool // from the config, after the first crash
		launches    int
	}{
		{"max_attempts bounds the launches", 2, false, 2},
		{"a job removed from the config launches nothing more", 5, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			configs := filepath.Join(dir, "configs")
			mkdir(t, configs)
			launches := filepath.Join(dir, "launches")
			writeConfig(t, configs, "p", fmt.Sprintf(`jobs:
  - id: crash
    schedule: "0 0 1 1 *"
    idempotent: true
    retries: {max_attempts: %d, min_backoff: 1s}
    command:
      argv: ["/bin/sh", "-c", "echo $SUNDIAL_ATTEMPT >> %s && kill -9 $PPID"]
`, tc.maxAttempts, launches))
			args := []string{"--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs, "--command-projects", "p"}

			s := serve(t, args...)
			waitForJob(t, s, "p", "crash")
			// The trigger launches the job in its own request, once its
			// occurrence has committed, and the launch kills the server:
			// on a loaded machine it may do so before the answer is out.
			resp, err := http.Post("http://"+s.addr+"/api/v1/projects/p/jobs/crash/trigger", "application/json", strings.NewReader("{}"))
			switch {
			case err != nil:
				select {
				case <-s.done:
				case <-time.After(time.Minute):
					t.Fatalf("trigger: %v, and the server did not die", err)
				}
			case resp.StatusCode != http.StatusAccepted:
				t.Fatalf("trigger: %d", resp.StatusCode)
			default:
				resp.Body.Close()
			}
			var inv invocationView
			for restarts := 0; ; restarts++ {
				var ended bool
				inv, ended = waitForEndOrExit(t, s, "/api/v1/projects/p/jobs/crash/invocations/manual-1")
				if ended {
					break
				}
				if restarts == 2*tc.maxAttempts+2 {
					t.Fatalf("the server died %d times and the invocation has not ended", restarts+1)
				}
				if tc.remove {
					writeConfig(t, configs, "p", "jobs: []\n")
				}
				s = serve(t, args...)
			}
			s.stop(t)

			b, err := os.ReadFile(launches)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(b), "\n"); got != tc.launches {
				t.Errorf("launched %d times (attempts %q); want %d", got, b, tc.launches)
			}
			if inv.Status != "FAILED" || inv.Message != "launch outcome unknown" {
				t.Errorf("the invocation ended %s %q; want FAILED \"launch outcome unknown\"", inv.Status, inv.Message)
			}
		})
	}
}

type invocationView struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// waitForEndOrExit polls an invocation until it has ended (true) or the
// server has exited (false).
func waitForEndOrExit(t *testing.T, s *runningServer, path string) (invocationView, bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return invocationView{}, false
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get("http://" + s.addr + path)
		if err != nil {
			continue // the server may be dying
		}
		var inv invocationView
		err = json.NewDecoder(resp.Body).Decode(&inv)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK {
			switch inv.Status {
			case "SUCCEEDED", "FAILED", "ABORTED":
				return inv, true
			}
		}
	}
	t.Fatalf("%s: neither ended nor did the server exit within a minute", path)
	return invocationView{}, false
}
