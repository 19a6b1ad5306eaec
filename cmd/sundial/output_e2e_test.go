package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A command's long output is kept as its head and tail, and the
// invocation's log says exactly how much of the output was left out
// between them. Before, the engine cut the middle of the command's log
// again to fit its own bound, cutting the command's note away with it,
// and said only how many bytes of the log it had dropped: "219 bytes
// dropped" for 1 GiB of output.
func TestServeLogSaysHowMuchOutputWasLeftOut(t *testing.T) {
	t.Parallel()
	const output = 4 << 20
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "p", fmt.Sprintf(`jobs:
  - id: loud
    schedule: "0 0 1 1 *"
    command:
      argv: ["/bin/sh", "-c", "head -c %d /dev/zero | tr '\\0' q"]
`, output))
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs, "--command-projects", "p")
	waitForJob(t, s, "p", "loud")
	if code := post(t, "http://"+s.addr+"/api/v1/projects/p/jobs/loud/trigger", nil); code != http.StatusAccepted {
		t.Fatalf("trigger: %d", code)
	}
	var inv struct {
		Status string `json:"status"`
		Log    string `json:"log"`
	}
	waitUntil(t, time.Minute, "the invocation to end", func() bool {
		s.getJSON(t, "/api/v1/projects/p/jobs/loud/invocations/manual-1", &inv)
		return inv.Status == "SUCCEEDED" || inv.Status == "FAILED"
	})
	kept := strings.Count(inv.Log, "q")
	want := fmt.Sprintf("[... %d bytes of output dropped ...]", output-kept)
	if inv.Status != "SUCCEEDED" || kept == 0 || !strings.Contains(inv.Log, want) {
		t.Errorf("invocation %s, %d bytes of output kept; want its log to say %q:\n%.300s ... %.300s",
			inv.Status, kept, want, inv.Log, inv.Log[max(0, len(inv.Log)-300):])
	}
}
