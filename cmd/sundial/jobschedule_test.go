package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const jobScheduleConfig = `calendars:
  - name: business-days
    weekdays: [mon-fri]
  - name: holidays
    ics: holidays.ics
jobs:
  - id: report
    schedule: "30 2 * * *"
    time_zone: America/New_York
    dst: {gap: shift}
    only_calendars: [business-days]
    skip_calendars: [holidays]
    active: {from: 2026-03-04, until: 2026-03-12}
    max_runs: 3
    noop: {}
  - id: heartbeat
    schedule: "@every 10m"
    noop: {}
`

const jobScheduleICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260309\r\nSUMMARY:A holiday\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// TestScheduleOfAConfigsJob: --config and --job show the job's fire times
// as the server runs them, across the spring-forward of 2026-03-08, each
// fire time that is not an occurrence with why, and why none follows the
// last.
func TestScheduleOfAConfigsJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string]string{"billing.yaml": jobScheduleConfig, "holidays.ics": jobScheduleICS} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "billing.yaml")
	out, errOut, status := runCLI("schedule", "next", "--config", file, "--job", "report", "--from", "2026-03-02T00:00:00Z", "-n", "10")
	want := `2026-03-02T02:30:00-05:00 .. 2026-03-03T02:30:00-05:00  2 removed: before the active window
2026-03-04T02:30:00-05:00
2026-03-05T02:30:00-05:00
2026-03-06T02:30:00-05:00
2026-03-07T02:30:00-05:00 .. 2026-03-08T03:00:00-04:00  2 removed: not on business-days
2026-03-09T02:30:00-04:00  removed: on holidays
2026-03-10T02:30:00-04:00
2026-03-11T02:30:00-04:00
2026-03-12T02:30:00-04:00
no more occurrences after 2026-03-12T02:30:00-04:00: its active window ends 2026-03-12T23:59:59-04:00
`
	if status != 0 || out != want {
		t.Errorf("status %d, stderr %s\n got:\n%s\nwant:\n%s", status, errOut, out, want)
	}
	out, _, status = runCLI("schedule", "explain", "--config", file, "--job", "billing/report", "--from", "2026-03-06T12:00:00Z")
	wantExplain := `billing/report: At 02:30, America/New_York; if 02:30 does not exist it runs at 03:00; only on days of business-days; not on days of holidays; active from 2026-03-04 00:00:00 EST until 2026-03-12 23:59:59 EDT
  time zone: America/New_York
  DST: gap shift, repeat first
  only on: business-days (Monday through Friday)
  skips: holidays (1 date from 2026-03-09 to 2026-03-09)
  active: 2026-03-04T00:00:00-05:00 to 2026-03-12T23:59:59.999999999-04:00
  max_runs: 3 scheduled runs, counted by the server from when the cap was set; not shown below
2026-03-07T02:30:00-05:00 .. 2026-03-08T03:00:00-04:00  2 removed: not on business-days
2026-03-09T02:30:00-04:00  removed: on holidays
2026-03-10T02:30:00-04:00
2026-03-11T02:30:00-04:00
2026-03-12T02:30:00-04:00
no more occurrences after 2026-03-12T02:30:00-04:00: its active window ends 2026-03-12T23:59:59-04:00
`
	if status != 0 || out != wantExplain {
		t.Errorf("explain: status %d\n got:\n%s\nwant:\n%s", status, out, wantExplain)
	}
	out, _, status = runCLI("schedule", "next", "--config", file, "--job", "heartbeat", "--from", "2026-03-02T00:00:00Z", "-n", "2")
	if want := "2026-03-02T00:10:00Z\n2026-03-02T00:20:00Z\n"; status != 0 || out != want {
		t.Errorf("an interval job: status %d, got %q, want %q", status, out, want)
	}

	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"--config", file, "--job", "nope"}, 1, `--job "nope": no such job in ` + file + ` (it has report, heartbeat)`},
		{[]string{"--config", file, "--job", "report", "--tz", "UTC"}, exitUsage, "--tz: not with --config, whose job says it"},
		{[]string{"--config", file}, exitUsage, "--config and --job go together"},
		{[]string{"--config", file, "--job", "report", "0 * * * *"}, exitUsage, `a schedule expression ("0 * * * *") and --config: give one`},
		{[]string{"--config", filepath.Join(dir, "missing.yaml"), "--job", "report"}, 1, "--config: open"},
	} {
		_, errOut, status := runCLI(append([]string{"schedule", "next"}, c.args...)...)
		if status != c.status || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, status, errOut, c.status, c.want)
		}
	}
}

// TestValidateCalendars: validate reads the .ics files beside a config and
// the server's shared calendars (--calendars), and reports a bad one at
// its file and line.
func TestValidateCalendars(t *testing.T) {
	t.Parallel()
	dir, shared := t.TempDir(), t.TempDir()
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(dir, "billing.yaml")
	write(config, "jobs:\n  - id: a\n    schedule: \"0 9 * * *\"\n    skip_calendars: [us-holidays]\n    noop: {}\n")
	write(filepath.Join(shared, "us-holidays.ics"), jobScheduleICS)
	if _, errOut, status := runCLI("validate", dir); status != 1 || !strings.Contains(errOut, config+`:4: jobs[0].skip_calendars[0]: "us-holidays": no such calendar`) {
		t.Errorf("without --calendars: status %d, stderr %s", status, errOut)
	}
	if out, errOut, status := runCLI("validate", "--calendars", shared, config); status != 0 || out != "1 config file, 1 job: valid\n" {
		t.Errorf("with --calendars: status %d, stdout %q, stderr %s", status, out, errOut)
	}
	bad := filepath.Join(shared, "bad.ics")
	write(bad, strings.Replace(jobScheduleICS, "DTSTART;VALUE=DATE:20260309", "DTSTART:20260309T100000", 1))
	if _, errOut, status := runCLI("validate", dir, "--calendars", shared); status != 1 || !strings.Contains(errOut, bad+":7: VEVENT[0].DTSTART:") {
		t.Errorf("a bad shared calendar: status %d, stderr %s", status, errOut)
	}
}
