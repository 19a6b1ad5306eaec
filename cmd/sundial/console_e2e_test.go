package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `sundial serve` serves the console at /: to a browser on its own
// machine, the administrator of the single-user mode, the examples'
// project with its jobs, under the strict Content-Security-Policy; to a
// caller through a proxy, which proves nothing, a page saying it may not
// see it.
func TestServeServesTheConsole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--config-dir", filepath.Join("..", "..", "examples", "configs"),
		"--command-projects", "ops")
	waitForJob(t, s, "demo", "heartbeat")
	get := func(path string, header http.Header) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest("GET", "http://"+s.addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}
	waitUntil(t, time.Minute, "the demo project's page to list its jobs", func() bool {
		status, hdr, b := get("/projects/demo", nil)
		if status == http.StatusOK && !strings.Contains(hdr.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Fatalf("/projects/demo: Content-Security-Policy %q", hdr.Get("Content-Security-Policy"))
		}
		return status == http.StatusOK && strings.Contains(b, "always-fails") && strings.Contains(b, "heartbeat")
	})
	if status, hdr, _ := get("/", nil); status != http.StatusOK || hdr.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("/: %d %q, want the projects page", status, hdr.Get("Content-Type"))
	}
	status, _, proxied := get("/projects/demo", http.Header{"X-Forwarded-For": {"203.0.113.9"}})
	if status != http.StatusUnauthorized || strings.Contains(proxied, "always-fails") {
		t.Errorf("/projects/demo through a proxy: %d, and the page names a job: %v", status, strings.Contains(proxied, "always-fails"))
	}
}
