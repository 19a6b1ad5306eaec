package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A url_fetch job of one project cannot steer another project's job
// through the server's own API: not by its address, by another spelling
// of it, by a name or by a redirect from an allowed receiver, though the
// operator allows loopback (as every test server does). Before, the
// embedded shape allowed loopback and took every loopback caller for the
// admin, so the attacker's POST paused the victim's job.
func TestServeURLFetchCannotCallTheServersAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "victim", "jobs:\n  - id: x\n    schedule: triggered\n    noop: {}\n")
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs, "--config-refresh", "1h")
	waitForJob(t, s, "victim", "x")

	port := s.addr[strings.LastIndexByte(s.addr, ':')+1:]
	pause := "/api/v1/projects/victim/jobs/x/pause"
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+s.addr+pause, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	urls := map[string]string{
		"direct":    "http://" + s.addr + pause,
		"localhost": "http://localhost:" + port + pause,
		"mapped":    "http://[::ffff:127.0.0.1]:" + port + pause,
		"zeros":     "http://0.0.0.0:" + port + pause,
		"redirect":  redirector.URL + "/",
	}
	var b strings.Builder
	b.WriteString("jobs:\n")
	for id, u := range urls {
		fmt.Fprintf(&b, "  - id: %s\n    schedule: \"* * * * * *\"\n    url_fetch:\n      url: %s\n      method: POST\n      headers: {Content-Type: application/json}\n      body: '{\"reason\": \"taken over\"}'\n", id, u)
	}
	writeConfig(t, configs, "attacker", b.String())
	s.hup(t)

	for id := range urls {
		var last struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		}
		waitForJob(t, s, "attacker", id)
		waitUntil(t, time.Minute, "an attempt of attacker/"+id+" to end", func() bool {
			raw := getJob(t, s, "attacker", id).LastInvocation
			return raw != nil && json.Unmarshal(raw, &last) == nil && (last.Status == "FAILED" || last.Status == "SUCCEEDED")
		})
		if last.Status != "FAILED" || !strings.Contains(last.Message, "the server itself") {
			t.Errorf("attacker/%s: %s %q; want FAILED, refused as the server itself", id, last.Status, last.Message)
		}
	}
	if state := getJob(t, s, "victim", "x").State; state == "PAUSED" {
		t.Errorf("victim/x is %s: another project's url_fetch job paused it through the server's API", state)
	}
}

// The embedded shape calls loopback only where the operator names it in
// --url-allow. Before, it allowed loopback by default.
func TestServeURLFetchReachesLoopbackOnlyWhereAllowed(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, 0)
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "p", "jobs:\n  - id: local\n    schedule: \"* * * * * *\"\n    url_fetch:\n      url: "+rcv.URL+"/local\n")
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs, "--url-allow", "192.0.2.0/24")
	var last struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	waitForJob(t, s, "p", "local")
	waitUntil(t, time.Minute, "an attempt of p/local to end", func() bool {
		raw := getJob(t, s, "p", "local").LastInvocation
		return raw != nil && json.Unmarshal(raw, &last) == nil && (last.Status == "FAILED" || last.Status == "SUCCEEDED")
	})
	if last.Status != "FAILED" || !strings.Contains(last.Message, "a loopback address") {
		t.Errorf("p/local: %s %q; want FAILED, refused as a loopback address", last.Status, last.Message)
	}
	if hits, _ := rcv.snapshot(); len(hits) != 0 {
		t.Errorf("the loopback receiver saw %d requests; want none", len(hits))
	}
}

// In the single-user mode a command running as --command-user is not the
// operator, though it calls from the server's own machine: it can neither
// read another project's definitions nor pause its job. Before, every
// loopback caller was the administrator, and the command paused it.
func TestServeCommandUserIsNotTheOperator(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("--command-user needs the server to run as root")
	}
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("the command speaks HTTP through bash's /dev/tcp")
	}
	dir, err := os.MkdirTemp("", "sundial-e2e-operator-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	configs := filepath.Join(dir, "configs")
	mkdirPrivate(t, configs)
	writeConfig(t, configs, "victim", "jobs:\n  - id: x\n    schedule: triggered\n    noop: {}\n")
	// The command is written once the server's port is known.
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs, "--command-projects", "attacker", "--command-user", "nobody", "--config-refresh", "1h")
	waitForJob(t, s, "victim", "x")
	host, port, _ := strings.Cut(s.addr, ":")
	body := `{"reason": "taken over"}`
	request := fmt.Sprintf(`POST /api/v1/projects/victim/jobs/x/pause HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s`, s.addr, len(body), body)
	writeConfig(t, configs, "attacker", fmt.Sprintf(`jobs:
  - id: steer
    schedule: triggered
    command:
      argv:
        - /bin/bash
        - -c
        - |
          exec 3<>/dev/tcp/%s/%s
          printf '%s' >&3
          head -n 1 <&3
`, host, port, request))
	s.hup(t)
	waitForJob(t, s, "attacker", "steer")
	if code := post(t, "http://"+s.addr+"/api/v1/projects/attacker/jobs/steer/trigger", nil); code != http.StatusAccepted {
		t.Fatalf("trigger: %d", code)
	}
	var inv struct {
		Status string `json:"status"`
		Log    string `json:"log"`
	}
	waitUntil(t, time.Minute, "the invocation to end", func() bool {
		s.getJSON(t, "/api/v1/projects/attacker/jobs/steer/invocations/manual-1", &inv)
		return inv.Status == "SUCCEEDED" || inv.Status == "FAILED"
	})
	if !strings.Contains(inv.Log, "401") {
		t.Errorf("the command's request was answered:\n%s\nwant 401: a command of another user is anonymous", inv.Log)
	}
	if state := getJob(t, s, "victim", "x").State; state == "PAUSED" {
		t.Errorf("victim/x is %s: a command running as --command-user paused it as the administrator", state)
	}
}
