package main

import (
	"bytes"
	"fmt"
	"github.com/sundial-cron/sundial/store/sqlite"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Commands run only for the projects the operator names: another
// project's config using command is refused at load with the file, line
// and field, and runs nothing. Before, every project's commands ran, as
// the server's user.
func TestServeRunsCommandsOnlyForNamedProjects(t *testing.T) {
	eachShape(t, func(t *testing.T, storage []string) {
		dir := t.TempDir()
		configs := filepath.Join(dir, "configs")
		mkdir(t, configs)
		ran := func(project string) string { return filepath.Join(dir, project+".ran") }
		for _, p := range []string{"ops", "billing"} {
			writeConfig(t, configs, p, fmt.Sprintf("jobs:\n  - id: touch\n    schedule: \"* * * * * *\"\n    command:\n      argv: [touch, %s]\n", ran(p)))
		}
		s := serve(t, append(storage, "--config-dir", configs, "--command-projects", "ops")...)
		waitUntil(t, time.Minute, "ops's command to run", func() bool {
			_, err := os.Stat(ran("ops"))
			return err == nil
		})
		want := filepath.Join(configs, "billing.yaml") + ":4: jobs[0].command: job billing/touch: command: the server runs commands only for projects ops (--command-projects), not for project billing"
		if got := projectConfig(t, s, "billing"); got.Error != want || got.Revision != "" {
			t.Errorf("billing's config: %+v; want no revision and the error %q", got, want)
		}
		if _, err := os.Stat(ran("billing")); err == nil {
			t.Errorf("billing's command ran")
		}
	})
}

// With --command-user, a command cannot read the server's secrets (the
// admin token file, the database, the server's environment) nor kill the
// server, though it tries the same ways a job did as the server's user.
func TestServeCommandUserKeepsTheServersSecrets(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("--command-user needs the server to run as root")
	}
	// A directory anyone may enter: only the files' own modes protect them.
	dir, err := os.MkdirTemp("", "sundial-e2e-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	configs := filepath.Join(dir, "configs")
	mkdirPrivate(t, configs)
	token := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(token, []byte(strings.Repeat("t0ken", 8)), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "sundial.db")
	writeConfig(t, configs, "p", fmt.Sprintf(`jobs:
  - id: steal
    schedule: triggered
    command:
      argv:
        - /bin/sh
        - -c
        - |
          cat %s && exit 10
          cat %s >/dev/null && exit 11
          cat /proc/$PPID/environ >/dev/null && exit 12
          kill -9 $PPID && exit 13
          id -un
`, token, db))
	s := serve(t, "--db", db, "--config-dir", configs, "--command-projects", "p", "--command-user", "nobody", "--admin-token-file", token)
	waitForJob(t, s, "p", "steal")
	if code := post(t, "http://"+s.addr+"/api/v1/projects/p/jobs/steal/trigger", nil); code != http.StatusAccepted {
		t.Fatalf("trigger: %d", code)
	}
	var inv struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		Log     string `json:"log"`
	}
	waitUntil(t, time.Minute, "the invocation to end", func() bool {
		s.getJSON(t, "/api/v1/projects/p/jobs/steal/invocations/manual-1", &inv)
		return inv.Status == "SUCCEEDED" || inv.Status == "FAILED"
	})
	if inv.Status != "SUCCEEDED" || !strings.HasSuffix(strings.TrimSpace(inv.Log), "nobody") || strings.Contains(inv.Log, "t0ken") {
		t.Errorf("invocation %s %q, log:\n%s\nwant SUCCEEDED, run as nobody, every read and the kill refused", inv.Status, inv.Message, inv.Log)
	}
}

// --command-user is refused at start while a secret of the server's is
// readable by other users, and where the server cannot switch users.
func TestServeCommandUserRefusesReadableSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdirPrivate(t, configs)
	token := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(token, []byte(strings.Repeat("t0ken", 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	want := token + " is readable by users other than the server's (mode -rw-r--r--)"
	if os.Geteuid() != 0 {
		want = "needs the server to run as root"
	}
	var stderr bytes.Buffer
	code := runServe([]string{"--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs, "--listen", "127.0.0.1:0",
		"--command-projects", "p", "--command-user", "nobody", "--admin-token-file", token}, io.Discard, &stderr, time.Now)
	if code != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("serve: exit %d, log:\n%s\nwant exit 1 and %q", code, stderr.String(), want)
	}
}

// A command the server ends itself when --stop-grace runs out, at a
// SIGTERM, has a known outcome: its invocation reads FAILED, saying the
// server stopped it, and the clean stop logs no warning. Before, it read
// FAILED: launch outcome unknown after the next start, and the stop
// logged a WARN "task failed ... context canceled".
func TestServeStopRecordsTheCommandItEnded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "ops", "jobs:\n  - id: long\n    schedule: triggered\n    command:\n      argv: [/bin/sleep, \"300\"]\n")
	db := filepath.Join(dir, "sundial.db")
	s := serve(t, "--db", db, "--config-dir", configs, "--command-projects", "ops", "--stop-grace", "2s", "--command-cgroup", "none")
	waitForJob(t, s, "ops", "long")
	if code := post(t, "http://"+s.addr+"/api/v1/projects/ops/jobs/long/trigger", nil); code != http.StatusAccepted {
		t.Fatalf("trigger: %d", code)
	}
	waitUntil(t, time.Minute, "the command to run", func() bool {
		var inv struct{ Status string }
		s.getJSON(t, "/api/v1/projects/ops/jobs/long/invocations/manual-1", &inv)
		return inv.Status == "RUNNING"
	})
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		t.Fatal("sundial serve did not stop within a minute of SIGTERM")
	}
	st, err := sqlite.Open(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	inv, err := st.Invocation(withTimeout(t, time.Minute), "ops/long", "manual-1")
	if err != nil {
		t.Fatal(err)
	}
	if inv.Status != "FAILED" || !strings.Contains(inv.Message, "stopped with the server") {
		t.Errorf("the command the stop ended reads %s %q; want FAILED, stopped with the server", inv.Status, inv.Message)
	}
	for line := range strings.Lines(s.log.String()) {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "task failed") {
			t.Errorf("a clean stop logged a warning: %s", line)
		}
	}
}
