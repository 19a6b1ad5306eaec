package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/web/signin"
	"github.com/sundial-cron/sundial/web/signin/signintest"
)

// `sundial serve` with --oidc-issuer serves the sign-in flow: a browser
// leaves for the issuer, comes back with a session cookie, lands on the
// page it asked for, and signing out clears the cookie. The session is the
// API's identity: the signed-in user sees the project whose config grants
// her a role and not the other; a caller on the same machine without a
// session is anonymous, since sign-in is configured.
func TestServeSignsInWithOIDC(t *testing.T) {
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	// The issuer must know the callback before the server starts, so the
	// server's port is chosen first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	public := "http://" + addr
	is := signintest.New(signintest.Options{ClientID: "sundial", ClientSecret: "e2e-secret",
		RedirectURL: public + signin.CallbackPath, Email: "alice@example.com", Now: time.Now})
	t.Cleanup(is.Close)
	writeConfig(t, configs, "mine", "roles:\n  - {role: reader, members: [user:alice@example.com]}\njobs:\n  - {id: a, schedule: \"@hourly\", noop: {}}\n")
	writeConfig(t, configs, "theirs", "jobs:\n  - {id: a, schedule: \"@hourly\", noop: {}}\n")
	keys, secret := filepath.Join(dir, "keys"), filepath.Join(dir, "secret")
	for path, content := range map[string]string{keys: signin.NewKey() + "\n", secret: "e2e-secret\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := serve(t, "--listen", addr, "--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs,
		"--public-url", public, "--oidc-issuer", is.URL(), "--oidc-client-id", "sundial",
		"--oidc-client-secret-file", secret, "--cookie-key-file", keys, "--insecure-dev-cookies")
	if !strings.Contains(srv.log.String(), "INSECURE") {
		t.Errorf("--insecure-dev-cookies without a warning in the log:\n%s", srv.log)
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) *http.Response {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := get(public + signin.SignInPath + "?next=/api/v1/projects")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), is.URL()) {
		t.Fatalf("sign-in: %s to %q; want a redirect to the issuer", resp.Status, resp.Header.Get("Location"))
	}
	resp = get(get(resp.Header.Get("Location")).Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/api/v1/projects" {
		t.Fatalf("callback: %s to %q; want 303 to /api/v1/projects", resp.Status, resp.Header.Get("Location"))
	}
	session := func() bool {
		for _, c := range jar.Cookies(resp.Request.URL) {
			if c.Name == signin.SessionCookie && c.Value != "" {
				return true
			}
		}
		return false
	}
	if !session() {
		t.Fatal("no session cookie after sign-in")
	}
	getJSON := func(c *http.Client, path string, out any) int {
		t.Helper()
		resp, err := c.Get(public + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp.StatusCode
	}
	var who struct{ Identity string }
	if getJSON(client, "/api/v1/whoami", &who); who.Identity != "user:alice@example.com" {
		t.Errorf("whoami with the session: %q", who.Identity)
	}
	waitUntil(t, time.Minute, "the configs to be applied", func() bool {
		var out struct{ Projects []struct{ Project string } }
		return getJSON(client, "/api/v1/projects", &out) == http.StatusOK && len(out.Projects) == 1 && out.Projects[0].Project == "mine"
	})
	var refused struct{ Error string }
	if code := getJSON(client, "/api/v1/projects/theirs/jobs/a", &refused); code != http.StatusNotFound {
		t.Errorf("alice reading a project that grants her nothing: %d %q; want 404", code, refused.Error)
	}
	if code := getJSON(http.DefaultClient, "/api/v1/projects/mine/jobs/a", &refused); code != http.StatusUnauthorized {
		t.Errorf("a local caller without a session, sign-in configured: %d %q; want 401", code, refused.Error)
	}
	out, err := client.Post(public+signin.SignOutPath, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	if out.StatusCode != http.StatusSeeOther || session() {
		t.Errorf("sign-out: %s, session cookie still set: %t", out.Status, session())
	}
}
