package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Callers that open connections, send a request and then hold them idle
// must not take the file descriptors the server's jobs need (issue 16,
// finding 4: with no idle timeout and no bound on connections, jobs then
// failed with "pipe2: too many open files"). The server runs with 64
// descriptors, 200 such connections are held, and a job that runs a
// command every second must keep running.
func TestServeKeepsRunningJobsWhileCallersHoldConnections(t *testing.T) {
	t.Parallel()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("needs prlimit (util-linux) to give the server few file descriptors")
	}
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	if err := os.Mkdir(configs, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ran")
	writeConfig(t, configs, "p", fmt.Sprintf(`jobs:
  - id: tick
    schedule: "* * * * * *"
    command:
      argv: ["/bin/sh", "-c", "echo x >> %s"]
`, out))
	s := serveUnder(t, []string{prlimit, "--nofile=64:64"},
		"--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs, "--max-connections", "16", "--command-projects", "p")

	ran := func() int {
		b, _ := os.ReadFile(out)
		return bytes.Count(b, []byte("\n"))
	}
	waitUntil(t, time.Minute, "the job to run", func() bool { return ran() > 0 })

	for range 200 {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte("GET /api/v1/projects HTTP/1.1\r\nHost: sundial\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	before := ran()
	waitUntil(t, time.Minute, "the job to run 5 more times while the connections are held", func() bool { return ran() >= before+5 })
	if n, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid)); err == nil && len(n) >= 64 {
		t.Errorf("the server has %d file descriptors open, all it may", len(n))
	}
}
