package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fixedNow is the clock of these tests: --from defaults to it.
func fixedNow() time.Time { return time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC) }

func runCLI(args ...string) (stdout, stderr string, status int) {
	var out, errOut bytes.Buffer
	status = run(args, &out, &errOut, fixedNow)
	return out.String(), errOut.String(), status
}

func TestScheduleNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "spring-forward day shifts 02:30 to 03:00 in the zone's offset",
			args: []string{"schedule", "next", "30 2 * * *", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00Z", "-n", "3"},
			want: "2026-03-08T03:00:00-04:00\n2026-03-09T02:30:00-04:00\n2026-03-10T02:30:00-04:00\n",
		},
		{
			name: "flags may come before the expression",
			args: []string{"schedule", "next", "-n", "2", "--from", "2026-01-01T00:00:00Z", "@daily"},
			want: "2026-01-02T00:00:00Z\n2026-01-03T00:00:00Z\n",
		},
		{
			name: "--from defaults to now and results are strictly after it",
			args: []string{"schedule", "next", "0 12 * * *", "-n", "1"},
			want: "2026-03-08T12:00:00Z\n",
		},
		{
			name: "gap skip drops the occurrence",
			args: []string{"schedule", "next", "30 2 * * *", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00Z", "-n", "1", "--dst-gap", "skip"},
			want: "2026-03-09T02:30:00-04:00\n",
		},
		{
			name: "repeat both fires in both 01:30s",
			args: []string{"schedule", "next", "30 1 * * *", "--tz", "America/New_York", "--from", "2026-11-01T00:00:00-04:00", "-n", "2", "--dst-repeat", "both"},
			want: "2026-11-01T01:30:00-04:00\n2026-11-01T01:30:00-05:00\n",
		},
		{
			name: "a schedule whose years run out prints fewer lines",
			args: []string{"schedule", "next", "0 0 0 1 1 * 2027-2028", "--from", "2026-06-01T00:00:00Z"},
			want: "2027-01-01T00:00:00Z\n2028-01-01T00:00:00Z\n",
		},
		{
			name: "triggered prints nothing",
			args: []string{"schedule", "next", "triggered"},
			want: "",
		},
		{
			name: "the job id seeds H",
			args: []string{"schedule", "next", "H(0-0) H(5-5) * * *", "--job-id", "p/j", "-n", "1"},
			want: "2026-03-08T05:00:00Z\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, status := runCLI(tt.args...)
			if status != 0 || errOut != "" {
				t.Fatalf("status %d, stderr %q", status, errOut)
			}
			if out != tt.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tt.want)
			}
		})
	}
}

func TestScheduleExplain(t *testing.T) {
	t.Parallel()
	out, errOut, status := runCLI("schedule", "explain", "30 2 * * 1-5", "--tz", "America/New_York", "--from", "2026-03-06T12:00:00Z")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	want := "At 02:30 on Monday through Friday, America/New_York; if 02:30 does not exist it runs at 03:00\n" +
		"2026-03-09T02:30:00-04:00\n2026-03-10T02:30:00-04:00\n2026-03-11T02:30:00-04:00\n" +
		"2026-03-12T02:30:00-04:00\n2026-03-13T02:30:00-04:00\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

// Bad input exits 2 with the error on stderr and nothing on stdout, so a
// config repo's CI can rely on it.
func TestScheduleBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"schedule", "next", "0 0 32 * *"}, `field 3 (day of month): 32 is out of range 1-31`},
		{[]string{"schedule", "next", "0 0 30 2 *"}, `never fires`},
		{[]string{"schedule", "next", "H * * * *"}, `field 1 (minute): H needs a job id`},
		{[]string{"schedule", "next", "@daily", "--tz", "Mars/Olympus"}, `--tz: unknown time zone "Mars/Olympus"`},
		{[]string{"schedule", "next", "@daily", "--from", "yesterday"}, `--from "yesterday" is not an RFC3339 time`},
		{[]string{"schedule", "next", "@daily", "-n", "-1"}, `-n -1: expected a count >= 0`},
		{[]string{"schedule", "next", "@daily", "--dst-gap", "later"}, `--dst-gap: dst gap "later": expected skip or shift`},
		{[]string{"schedule", "next", "@daily", "--dst-repeat", "twice"}, `--dst-repeat: dst repeat "twice": expected first, last or both`},
		{[]string{"schedule", "next", "0", "0", "*", "*", "*"}, `expected one schedule expression (quote it), got 5`},
		{[]string{"schedule", "next"}, `expected one schedule expression (quote it), got 0`},
		{[]string{"schedule", "next", "@daily", "--bogus"}, `flag provided but not defined: -bogus`},
		{[]string{"schedule", "list", "@daily"}, `expected next or explain`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{nil, `usage:`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			out, errOut, status := runCLI(tt.args...)
			if status != exitUsage {
				t.Errorf("status %d, want %d", status, exitUsage)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.wantErr)
			}
		})
	}
}
