package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/jobid"
)

// TestRunsLogsAndDescribeAgainstARealServer: on-call's verbs against a
// real `sundial serve` through a proxy with a token. runs lists a
// project's invocations across its jobs, newest first, filtered by
// status, time and job, and pages; logs prints a log, and with -f
// follows a running invocation to its end and exits by how it ended;
// describe prints a job's definition, state, next and last runs; a
// trigger the overlap policy skips, and an abort, say what they did;
// every one's --json parses back.
func TestRunsLogsAndDescribeAgainstARealServer(t *testing.T) {
	eachShape(t, func(t *testing.T, storage []string) {
		dir := t.TempDir()
		configs := filepath.Join(dir, "configs")
		mkdir(t, configs)
		release := filepath.Join(dir, "release")
		writeConfig(t, configs, "ops", fmt.Sprintf(`jobs:
  - id: ok
    schedule: triggered
    command: {argv: [sh, -c, "echo hello from ok"]}
    slo: {success: 99%%}
  - id: fails
    schedule: triggered
    command: {argv: [sh, -c, "echo boom; exit 3"]}
  - id: slow
    schedule: triggered
    command:
      argv: [sh, -c, "echo start; for i in $(seq 600); do [ -e %s ] && break; sleep 0.1; done; echo done"]
`, release))
		writeConfig(t, configs, "billing", "jobs:\n  - id: yearly\n    schedule: \"0 0 1 1 *\"\n    noop: {}\n")
		srv, api := serveAPI(t, storage, dir, "--config-dir", configs, "--command-projects", "ops")
		// Each job is its own transaction (side by side on PostgreSQL):
		// wait for every one the test steers.
		for _, j := range []string{"ops/ok", "ops/fails", "ops/slow", "billing/yearly"} {
			id := jobid.Split(j)
			waitForJob(t, srv, id.Project, id.Job)
		}
		run := func(args ...string) (int, string, string) {
			t.Helper()
			return sundial(append(args, api...)...)
		}
		expect := func(code int, args ...string) (string, string) {
			t.Helper()
			c, o, e := run(args...)
			if c != code {
				t.Fatalf("sundial %s = %d\nstdout %q\nstderr %q\nwant status %d", strings.Join(args, " "), c, o, e, code)
			}
			return o, e
		}

		// logs -f follows to the end: 0 for SUCCEEDED, 4 for FAILED.
		if o, _ := expect(0, "trigger", "ops/ok"); o != "triggered ops/ok: invocation manual-1\n" {
			t.Errorf("trigger ops/ok printed %q", o)
		}
		if o, e := expect(0, "logs", "ops/ok/manual-1", "-f", "--interval", "50ms"); !strings.Contains(o, "hello from ok") || e != "ops/ok manual-1 ended SUCCEEDED: command: exit status 0\n" {
			t.Errorf("logs -f of ops/ok printed %q, %q", o, e)
		}
		expect(0, "trigger", "ops/fails")
		if o, e := expect(4, "logs", "-f", "ops/fails/manual-1", "--interval", "50ms"); !strings.Contains(o, "boom") || !strings.HasPrefix(e, "ops/fails manual-1 ended FAILED") {
			t.Errorf("logs -f of ops/fails printed %q, %q", o, e)
		}

		// A trigger while one runs is skipped under overlap skip: it says so
		// and exits 3; following it ends at once with 3 too.
		expect(0, "trigger", "ops/slow")
		o, _ := expect(3, "trigger", "ops/slow")
		if want := "triggered ops/slow: invocation manual-2 will not run: skipped (overrun): another invocation is under way, and the job's overlap policy skips\n"; o != want {
			t.Errorf("a skipped trigger printed %q; want %q", o, want)
		}
		if _, e := expect(3, "logs", "ops/slow/manual-2", "-f"); e != "ops/slow manual-2 ended SKIPPED (overrun)\n" {
			t.Errorf("logs -f of a skip record printed %q", e)
		}
		followed := make(chan [3]any, 1)
		go func() {
			c, o, e := run("logs", "ops/slow/manual-1", "-f", "--interval", "50ms")
			followed <- [3]any{c, o, e}
		}()
		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := <-followed; got[0] != 0 || !strings.Contains(got[1].(string), "start\ndone\n") {
			t.Errorf("logs -f of the running ops/slow = %v; want 0 and its whole output", got)
		}
		if o, _ := expect(0, "logs", "ops/slow/manual-1"); !strings.Contains(o, "start\ndone\n") || !strings.Contains(o, "attempt 1 SUCCEEDED") {
			t.Errorf("logs of ops/slow printed %q", o)
		}
		var inv struct {
			JobID      string `json:"job_id"`
			ID, Status string
			Log        string
			LogWritten int `json:"log_written"`
		}
		if o, _ := expect(0, "logs", "ops/slow/manual-1", "--json"); json.Unmarshal([]byte(o), &inv) != nil || inv.JobID != "ops/slow" || inv.Status != "SUCCEEDED" || inv.LogWritten != len(inv.Log) {
			t.Errorf("logs --json printed %q", o)
		}

		// runs: newest first across the project's jobs; by status, job, time.
		o, _ = expect(0, "runs", "ops")
		rows := regexp.MustCompile(`(?m)^(ops/\S+)\s+(manual-\d)\s+(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\s+(\S+(?: \(overrun\))?)\s+(\S+)\s+(\S+)\s*(.*)$`).FindAllStringSubmatch(o, -1)
		var got []string
		for _, r := range rows {
			got = append(got, r[1]+" "+r[2]+" "+r[4]+" "+r[5])
		}
		if want := []string{"ops/slow manual-2 SKIPPED (overrun) -", "ops/slow manual-1 SUCCEEDED 1", "ops/fails manual-1 FAILED 1", "ops/ok manual-1 SUCCEEDED 1"}; strings.Join(got, "\n") != strings.Join(want, "\n") ||
			!strings.HasPrefix(o, "JOB ") {
			t.Errorf("runs ops printed\n%s\nrows %q; want %q", o, got, want)
		}
		if o, _ := expect(0, "runs", "ops", "--status", "failed"); strings.Count(o, "\n") != 2 || !strings.Contains(o, "ops/fails") || !strings.Contains(o, "exit status 3") {
			t.Errorf("runs ops --status failed printed\n%s", o)
		}
		var listed struct {
			Invocations []struct {
				JobID  string `json:"job_id"`
				ID     string
				Status string
			}
		}
		if o, _ := expect(0, "runs", "ops/slow", "--json", "--since", "1h"); json.Unmarshal([]byte(o), &listed) != nil || len(listed.Invocations) != 2 ||
			listed.Invocations[0].ID != "manual-2" || listed.Invocations[1].JobID != "ops/slow" {
			t.Errorf("runs ops/slow --json printed %q", o)
		}
		if o, e := expect(0, "runs", "ops", "--limit", "2", "--since", "2020-01-01T00:00:00Z"); strings.Count(o, "\n") != 3 || e != "(the newest 2; --limit N for more)\n" {
			t.Errorf("runs ops --limit 2 printed %q, %q", o, e)
		}
		future := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
		if o, e := expect(0, "runs", "ops", "--since", future, "--status", "running"); o != "" || e != "no invocations (running, since "+future+")\n" {
			t.Errorf("runs with nothing to list printed %q, %q", o, e)
		}
		if _, e := expect(1, "runs", "nosuch"); !strings.Contains(e, `404 Not Found: project "nosuch" not found`) {
			t.Errorf("runs of a missing project: %q", e)
		}

		// describe: what the job is, its state, its next and last runs.
		o, _ = expect(0, "describe", "billing/yearly")
		for _, want := range []string{"Job:", "billing/yearly", "State:", "SCHEDULED", "Schedule:", "0 0 1 1 * (UTC)", "Target:", "noop", "Revision:", "Policy:", "overlap=skip",
			"Next fire times:\n  " + fmt.Sprint(time.Now().UTC().Year()+1) + "-01-01T00:00:00Z\n", "-01-01T00:00:00Z\n  ", "Last runs, newest first:\n  none yet\n"} {
			if !strings.Contains(o, want) {
				t.Errorf("describe billing/yearly lacks %q:\n%s", want, o)
			}
		}
		if n := strings.Count(o, "-01-01T00:00:00Z"); n != 5 {
			t.Errorf("describe billing/yearly shows %d fire times; want 5:\n%s", n, o)
		}
		if strings.Contains(o, "Objectives") {
			t.Errorf("describe billing/yearly, which has no objectives, shows some:\n%s", o)
		}
		expect(0, "pause", "ops/ok", "--reason", "disk full")
		o, _ = expect(0, "describe", "ops/ok")
		for _, want := range []string{"PAUSED: disk full (by serviceAccount:admin-token@sundial.invalid at ", "Next fire times:\n  none: it runs when triggered\n", "manual-1", "SUCCEEDED",
			"Objectives (over 7d since ", ", 1 record):\n", "  succeeded  99%     100% (1 of 1)  100%\n"} {
			if !strings.Contains(o, want) {
				t.Errorf("describe ops/ok lacks %q:\n%s", want, o)
			}
		}
		var detail struct {
			ID            string
			Revision      string
			NextFireTimes []string `json:"next_fire_times"`
			Invocations   []struct{ ID string }
		}
		if o, _ := expect(0, "describe", "billing/yearly", "--json"); json.Unmarshal([]byte(o), &detail) != nil || detail.ID != "billing/yearly" || len(detail.NextFireTimes) != 5 || detail.Revision == "" {
			t.Errorf("describe --json printed %q", o)
		}

		// abort names what it ended and on which attempt.
		if err := os.Remove(release); err != nil {
			t.Fatal(err)
		}
		expect(0, "trigger", "ops/slow")
		if o, _ := expect(0, "abort", "ops/slow"); o != "aborted ops/slow: invocation manual-3 (attempt 1)\n" {
			t.Errorf("abort printed %q", o)
		}
		if o, _ := expect(3, "abort", "ops/slow"); o != "nothing to abort: ops/slow has no unfinished invocation\n" {
			t.Errorf("a second abort printed %q", o)
		}

		// --json on the verbs that change: the API's answer, the exit status
		// as without it.
		var triggered struct{ Invocation, Outcome string }
		if o, _ := expect(0, "trigger", "ops/fails", "--json"); json.Unmarshal([]byte(o), &triggered) != nil || triggered.Invocation != "manual-2" || triggered.Outcome != "queued" {
			t.Errorf("trigger --json printed %q", o)
		}
		var paused struct {
			Changed bool
			Job     struct{ State, Reason string }
		}
		if o, _ := expect(3, "pause", "ops/ok", "--reason", "disk full", "--json"); json.Unmarshal([]byte(o), &paused) != nil || paused.Changed || paused.Job.Reason != "disk full" {
			t.Errorf("pause --json of a job paused for that reason printed %q", o)
		}
		var resumed struct{ Changed []string }
		if o, _ := expect(0, "resume", "ops", "--all", "--json"); json.Unmarshal([]byte(o), &resumed) != nil || len(resumed.Changed) != 1 {
			t.Errorf("resume --all --json printed %q", o)
		}
		var aborted struct{ Aborted []any }
		if o, _ := expect(3, "abort", "ops/ok", "--json"); json.Unmarshal([]byte(o), &aborted) != nil || aborted.Aborted == nil || len(aborted.Aborted) != 0 {
			t.Errorf("abort --json with nothing to abort printed %q", o)
		}
	})
}
