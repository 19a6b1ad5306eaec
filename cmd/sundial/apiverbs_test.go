package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// sundial runs the sundial command in-process and returns its exit status,
// stdout and stderr.
func sundial(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut, time.Now)
	return code, out.String(), errOut.String()
}

// serveAPI starts `sundial serve` on storage (eachShape's) with args, an
// admin token, and a proxy in front of it, and returns the server and
// the API flags that reach it through the proxy with the token. The
// proxy adds X-Forwarded-For, so the server does not take the verbs for
// a local admin: only the token can admit them.
func serveAPI(t *testing.T, storage []string, dir string, args ...string) (*runningServer, []string) {
	t.Helper()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("api-verbs-admin-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, append(append(slices.Clone(storage), "--admin-token-file", tokenFile), args...)...)
	target, err := url.Parse("http://" + srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(proxy.Close)
	return srv, []string{"--server", proxy.URL, "--token-file", tokenFile}
}

// The API verbs steer a real `sundial serve` through a proxy (so the
// server sees a remote caller, who must present the admin token), print
// what they did, and print the API's error with exit status 1 when the
// server refuses.
func TestAPIVerbsAgainstARealServer(t *testing.T) {
	eachShapeInTurn(t, func(t *testing.T, storage []string) {
		dir := t.TempDir()
		configs := filepath.Join(dir, "configs")
		mkdir(t, configs)
		writeConfig(t, configs, "demo", `jobs:
  - id: on-demand
    schedule: triggered
    noop: {}
  - id: tick
    schedule: "0 0 1 1 *"
    noop: {}
`)
		// An hourly job has occurrences in the last two hours to backfill.
		writeConfig(t, configs, "hist", "jobs:\n  - id: hourly\n    schedule: \"0 * * * *\"\n    noop: {}\n")
		srv, api := serveAPI(t, storage, dir, "--config-dir", configs)
		proxyURL := api[1]

		var out string
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			// Each job is its own transaction, and the PostgreSQL shape
			// commits a revision's jobs side by side: wait for both.
			code, o, e := sundial(append([]string{"jobs", "demo"}, api...)...)
			if code == 0 && strings.Contains(o, "demo/tick") && strings.Contains(o, "demo/on-demand") {
				out = o
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sundial jobs demo never listed the jobs: %d %s %s", code, o, e)
			}
		}
		if !regexp.MustCompile(`(?m)^demo/on-demand\s+SCHEDULED\s+triggered\s+-\s+-`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^demo/tick\s+SCHEDULED\s+0 0 1 1 \*\s+\d{4}-01-01T`).MatchString(out) {
			t.Errorf("sundial jobs demo:\n%s", out)
		}

		// A verb that changes nothing says so, and exits 3.
		steps := []struct {
			args []string
			code int
			want string
		}{
			{[]string{"trigger", "demo/on-demand"}, 0, "triggered demo/on-demand: invocation manual-1\n"},
			{[]string{"pause", "demo/tick", "--reason", "database migration"}, 0, "demo/tick is PAUSED: database migration\n"},
			{[]string{"pause", "demo/tick", "--reason", "database migration"}, 3, "demo/tick was already PAUSED: database migration\n"},
			{[]string{"resume", "demo/tick"}, 0, "demo/tick is SCHEDULED\n"},
			{[]string{"resume", "demo/tick"}, 3, "demo/tick was not paused: it is SCHEDULED\n"},
			{[]string{"pause", "demo/tick", "--reason", "deploy", "--until", "2999-01-01T00:00:00Z"}, 0, "demo/tick is PAUSED: deploy\nit resumes by itself at 2999-01-01T00:00:00Z\n"},
			{[]string{"resume", "demo/tick"}, 0, "demo/tick is SCHEDULED\n"},
			{[]string{"pause", "--reason", "again", "demo/tick"}, 0, "demo/tick is PAUSED: again\n"},
			{[]string{"pause", "demo/tick", "--reason", "again, until noon"}, 0, "demo/tick is PAUSED: again, until noon (was: again)\n"},
			{[]string{"pause", "demo/tick", "--reason", "again"}, 0, "demo/tick is PAUSED: again (was: again, until noon)\n"},
			{[]string{"abort", "demo/tick"}, 3, "nothing to abort: demo/tick has no unfinished invocation\n"},
			{[]string{"pause", "demo", "--all", "--reason", "incident 9"}, 0, "paused demo/on-demand\n1 paused, 1 unchanged, 0 failed\n"},
			{[]string{"resume", "demo", "--all", "--paused-for", "incident 8"}, 3,
				"0 resumed, 0 unchanged, 0 failed\nno job of demo is paused for \"incident 8\"; the paused jobs' reasons:\n  \"again\" (1 job)\n  \"incident 9\" (1 job)\n"},
			{[]string{"resume", "demo", "--prefix", "on-", "--paused-for", "incident 9"}, 0, "resumed demo/on-demand\n1 resumed, 0 unchanged, 0 failed\n"},
			{[]string{"pause", "demo", "--prefix", "tick", "--reason", "incident 9"}, 3, "0 paused, 1 unchanged, 0 failed\n"},
			{[]string{"pause", "demo", "--all", "--reason", "incident 10", "--until", "2999-01-01T00:00:00Z"}, 0, "paused demo/on-demand\n1 paused, 1 unchanged, 0 failed\n"},
		}
		for _, s := range steps {
			code, o, e := sundial(append(s.args, api...)...)
			if code != s.code || o != s.want {
				t.Errorf("sundial %s = %d %q %q; want %d %q", strings.Join(s.args, " "), code, o, e, s.code, s.want)
			}
		}
		if _, o, _ := sundial(append([]string{"jobs", "demo"}, api...)...); !regexp.MustCompile(`(?m)^demo/tick\s+PAUSED\s.*again$`).MatchString(o) {
			t.Errorf("sundial jobs demo after the pause:\n%s", o)
		}
		// --json prints what the API says, for scripts to parse back.
		var listed struct {
			Jobs []struct{ ID, State, Reason string }
		}
		if code, o, e := sundial(append([]string{"jobs", "demo", "--json"}, api...)...); code != 0 || json.Unmarshal([]byte(o), &listed) != nil ||
			len(listed.Jobs) != 2 || listed.Jobs[1].ID != "demo/tick" || listed.Jobs[1].State != "PAUSED" || listed.Jobs[1].Reason != "again" {
			t.Errorf("sundial jobs demo --json = %d %q %q; want both jobs, demo/tick PAUSED: again", code, o, e)
		}
		var who struct{ Identity string }
		if code, o, e := sundial(append([]string{"whoami", "--json"}, api...)...); code != 0 || json.Unmarshal([]byte(o), &who) != nil || who.Identity != "serviceAccount:admin-token@sundial.invalid" {
			t.Errorf("sundial whoami --json = %d %q %q; want the admin token's identity", code, o, e)
		}
		// A reason holding an escape sequence prints it visible: it never
		// reaches the terminal as one.
		if code, o, e := sundial(append([]string{"resume", "demo/tick"}, api...)...); code != 0 {
			t.Fatalf("sundial resume = %d %q %q", code, o, e)
		}
		if code, o, e := sundial(append([]string{"pause", "demo/tick", "--reason", "again\x1b[2K\u009b2J"}, api...)...); code != 0 || strings.ContainsAny(o, "\x1b\u009b") || !strings.Contains(o, `again\x1b[2K\u009b2J`) {
			t.Errorf("sundial pause with an escape in the reason = %d %q %q; want it shown as \\x1b and \\u009b", code, o, e)
		}

		// A backfill of a range the yearly demo/tick never fires in would run
		// nothing: refused, saying so.
		from, to := time.Now().UTC().Add(-2*time.Hour).Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339)
		if code, _, e := sundial(append([]string{"backfill", "demo/tick", "--from", from, "--to", to}, api...)...); code != 1 || !strings.Contains(e, "409 Conflict") || !strings.Contains(e, "nothing to backfill") {
			t.Errorf("sundial backfill of a range with no occurrence = %d %q", code, e)
		}
		// hist/hourly is paused: its backfill waits for the resume, so the
		// cancel finds it, and a second cancel has nothing to stop.
		waitForJob(t, srv, "hist", "hourly")
		if code, o, e := sundial(append([]string{"pause", "hist/hourly", "--reason", "backfill"}, api...)...); code != 0 {
			t.Fatalf("sundial pause hist/hourly = %d %q %q", code, o, e)
		}
		if code, o, e := sundial(append([]string{"backfill", "hist/hourly", "--from", from, "--to", to}, api...)...); code != 0 || !strings.HasPrefix(o, "backfilling hist/hourly: ") {
			t.Errorf("sundial backfill = %d %q %q", code, o, e)
		}
		if code, o, e := sundial(append([]string{"backfill", "hist/hourly", "--cancel"}, api...)...); code != 0 || o != "canceled the backfill of hist/hourly\n" {
			t.Errorf("sundial backfill --cancel = %d %q %q", code, o, e)
		}
		if code, _, e := sundial(append([]string{"backfill", "demo/tick", "--cancel"}, api...)...); code != 1 || !strings.Contains(e, "409 Conflict") || !strings.Contains(e, "no backfill is under way") {
			t.Errorf("sundial backfill --cancel with none under way = %d %q", code, e)
		}
		if code, _, e := sundial(append([]string{"backfill", "demo/tick", "--from", "2020-01-01T00:00:00Z", "--to", to}, api...)...); code != 1 || !strings.Contains(e, "400 Bad Request") || !strings.Contains(e, "retention") {
			t.Errorf("sundial backfill past retention = %d %q", code, e)
		}

		// Refusals print the API's own message and exit 1.
		for _, tt := range []struct {
			name, env string
			args      []string
			want      string
		}{
			{"no token", "", []string{"trigger", "demo/on-demand", "--server", proxyURL}, "401 Unauthorized: sign in"},
			{"wrong token from the environment", "wrong-token-0123456789abcdef", []string{"trigger", "demo/on-demand", "--server", proxyURL}, "401 Unauthorized: credentials refused"},
			{"unknown job", "", append([]string{"trigger", "demo/nope"}, api...), "404 Not Found: job demo/nope not found"},
			{"a reason too long", "", append([]string{"pause", "demo/on-demand", "--reason", strings.Repeat("x", 501)}, api...), "400 Bad Request: reason: 501 characters; at most 500"},
		} {
			t.Setenv("SUNDIAL_TOKEN", tt.env)
			code, o, e := sundial(tt.args...)
			if code != 1 || o != "" || !strings.Contains(e, tt.want) {
				t.Errorf("%s: %d %q %q; want 1 and %q on stderr", tt.name, code, o, e, tt.want)
			}
		}
	})
}

func TestAPIVerbsRefuseBadInputWithoutCalling(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("some-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Port 9 (discard) on a TEST-NET address: nothing may be called.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"pause", "demo/tick"}, "--reason is required"},
		{[]string{"pause", "demo/tick", "--reason", "  "}, "--reason is required"},
		{[]string{"trigger", "demo"}, "want PROJECT/JOB"},
		{[]string{"pause", "demo", "--reason", "x"}, "--all or --prefix"},
		{[]string{"pause", "demo", "--all", "--prefix", "a", "--reason", "x"}, "--all or --prefix"},
		{[]string{"resume", "demo/tick", "--all"}, "go with a PROJECT"},
		{[]string{"pause", "demo", "--all"}, "--reason is required"},
		{[]string{"pause", "demo/tick", "--reason", "x", "--until", "tomorrow"}, `--until "tomorrow": want a time in RFC 3339`},
		{[]string{"pause", "demo", "--all", "--reason", "x", "--until", "next week"}, `--until "next week": want a time in RFC 3339`},
		{[]string{"trigger", "demo/a/b"}, "want PROJECT/JOB"},
		{[]string{"jobs", "demo/tick"}, "want a project name"},
		{[]string{"jobs"}, "want 1 argument"},
		{[]string{"backfill", "demo/tick"}, "give --from and --to, or --cancel"},
		{[]string{"backfill", "demo/tick", "--cancel", "--from", "2026-11-01T00:00:00Z"}, "give --from and --to, or --cancel"},
		{[]string{"backfill", "demo/tick", "--from", "yesterday", "--to", "2026-11-01T00:00:00Z"}, "--from \"yesterday\": want a time in RFC 3339"},
		{[]string{"trigger", "demo/tick", "--token", "x"}, "flag provided but not defined: -token"},
		{[]string{"trigger", "demo/tick", "--server", "http://192.0.2.1:9", "--token-file", tokenFile}, "a token goes only over https"},
		{[]string{"trigger", "demo/tick", "--token-file", filepath.Join(dir, "missing")}, "--token-file"},
		{[]string{"runs"}, "want 1 argument"},
		{[]string{"runs", "demo/a/b"}, "want PROJECT or PROJECT/JOB"},
		{[]string{"runs", "/tick"}, "want PROJECT or PROJECT/JOB"},
		{[]string{"runs", "demo", "--status", "broken"}, `--status "broken": want one of failed, running, succeeded, skipped`},
		{[]string{"runs", "demo", "--since", "yesterday"}, `--since "yesterday": want an age (90m, 24h, 7d) or a time in RFC 3339`},
		{[]string{"runs", "demo", "--since", "-1h"}, `--since "-1h"`},
		{[]string{"runs", "demo", "--limit", "0"}, "--limit 0: want at least 1"},
		{[]string{"logs", "demo/tick"}, "want PROJECT/JOB/INVOCATION"},
		{[]string{"logs", "demo//manual-1"}, "want PROJECT/JOB/INVOCATION"},
		{[]string{"logs", "demo/tick/manual-1", "-f", "--json"}, "-f and --json do not go together"},
		{[]string{"logs", "demo/tick/manual-1", "-f", "--interval", "0s"}, "--interval 0s: want a positive duration"},
		{[]string{"describe", "demo"}, "want PROJECT/JOB"},
	} {
		code, _, e := sundial(tt.args...)
		if code != exitUsage || !strings.Contains(e, tt.want) {
			t.Errorf("sundial %s = %d %q; want %d and %q", strings.Join(tt.args, " "), code, e, exitUsage, tt.want)
		}
	}
}

func TestTokenNew(t *testing.T) {
	t.Parallel()
	code, out, _ := sundial("token", "new", "--identity", "serviceAccount:ci@proj.iam.gserviceaccount.com")
	m := regexp.MustCompile(`(?s)^token: (sundial_[0-9a-f]{64})\n.*\n(sha256:[0-9a-f]{64}) serviceAccount:ci@proj.iam.gserviceaccount.com\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("sundial token new = %d %q", code, out)
	}
	if strings.Contains(m[2], m[1]) {
		t.Error("the file's line holds the token")
	}
	_, again, _ := sundial("token", "new", "--identity", "serviceAccount:ci@proj.iam.gserviceaccount.com")
	if strings.Contains(again, m[1]) {
		t.Error("two tokens made are the same")
	}
	if code, _, e := sundial("token", "new", "--identity", "ci@example.com"); code != exitUsage || !strings.Contains(e, "want serviceAccount:EMAIL") {
		t.Errorf("a bad identity: %d %q", code, e)
	}
}
