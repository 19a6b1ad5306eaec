package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/slo"
)

// A job's objectives reach its definition as written, with the default
// target and window where it leaves them out; none opts out, and a job
// that says nothing has the zero objective the server's defaults fill.
func TestObjectivesReachTheDefinition(t *testing.T) {
	t.Parallel()
	const yaml = `jobs:
  - id: own
    schedule: "*/5 * * * *"
    slo: {lateness: 30s, on_time: 99.5%, success: 99.9%, window: 28d}
    noop: {}
  - id: lateness-only
    schedule: "@hourly"
    slo: {lateness: 2m}
    noop: {}
  - id: opted-out
    schedule: "@hourly"
    slo: none
    noop: {}
  - id: silent
    schedule: "@hourly"
    noop: {}
`
	_, p, err := parseFile(t, "billing.yaml", yaml, allTargets())
	if err != nil {
		t.Fatal(err)
	}
	want := []slo.Objective{
		{Lateness: 30 * time.Second, OnTime: 0.995, Success: 0.999, Window: 28 * 24 * time.Hour},
		{Lateness: 2 * time.Minute},
		{None: true},
		{},
	}
	for i, j := range p.Jobs {
		if got := j.Definition.Objective; got != want[i] {
			t.Errorf("%s: Objective = %+v, want %+v", j.ID, got, want[i])
		}
	}
}

// Every mistake in an objective is reported at its file, line and field.
func TestObjectiveErrors(t *testing.T) {
	t.Parallel()
	const job = "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"a success that is not a percentage", job + "    slo: {success: 0.99}\n", `:5: jobs[0].slo.success: want a string, got the number 0.99`},
		{"a success of 100%", job + "    slo: {success: 100%}\n", `:5: jobs[0].slo.success: "100%": want a percentage above 0% and at most 99.999%`},
		{"a lateness without a unit", job + "    slo: {lateness: 30}\n", `:5: jobs[0].slo.lateness: want a duration such as 90s or 10m, got the number 30`},
		{"a zero lateness", job + "    slo: {lateness: 0s}\n", `:5: jobs[0].slo.lateness: want a positive duration such as 30s`},
		{"on_time without lateness", job + "    slo: {success: 99%, on_time: 95%}\n", `:5: jobs[0].slo.on_time: applies only with lateness`},
		{"a window too short", job + "    slo:\n      success: 99%\n      window: 1h\n", `:7: jobs[0].slo.window: 1h: want from 1d to 400d`},
		{"a window that is not one", job + "    slo: {success: 99%, window: a week}\n", `:5: jobs[0].slo.window: "a week": want a whole number of days such as 7d`},
		{"an objective of nothing", job + "    slo: {window: 7d}\n", `:5: jobs[0].slo: no objective: want lateness, success or both`},
		{"an unknown field", job + "    slo: {latency: 30s}\n", `:5: jobs[0].slo.latency: unknown field`},
		{"a word other than none", job + "    slo: off\n", `:5: jobs[0].slo: want a mapping such as {lateness: 30s, success: 99%}, or none`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, _, err := parseFile(t, "billing.yaml", tc.yaml, allTargets())
			if err == nil {
				t.Fatal("parsed; want an error")
			}
			if got := strings.TrimPrefix(err.Error(), path); !strings.HasPrefix(got, tc.want) {
				t.Errorf("error %q, want it to start %q", got, tc.want)
			}
		})
	}
}
