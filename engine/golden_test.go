package engine

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
)

// The stored shapes' golden files: testdata/state and testdata/definition
// hold, for every version, what some release wrote (v0: 313afd2, the last
// release before the shapes had versions), and each must decode to the
// value listed for it here. The current version's files must also be what
// encoding those values writes today, byte for byte.

var createGoldens = flag.Bool("create-goldens", false, "write the current version's golden files that do not exist yet (never overwrites one)")

// g0 is the goldens' reference instant.
var g0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func gmin(m int) time.Time { return g0.Add(time.Duration(m) * time.Minute) }

func goldenOccurrence(at time.Time) statemachine.Occurrence {
	return statemachine.Occurrence{ID: statemachine.OccurrenceID(at), At: at}
}

// goldenRunning is a job with a pending occurrence and an invocation in
// each phase, manual and scheduled.
var goldenRunning = statemachine.JobState{
	State: statemachine.Running, TickNonce: -42, TickAt: gmin(10), NextAt: gmin(10), Cursor: gmin(9),
	Pending: &statemachine.Occurrence{ID: statemachine.OccurrenceID(gmin(9)), At: gmin(9)},
	Active: []statemachine.Invocation{
		{Occurrence: goldenOccurrence(gmin(0)), Attempt: 1, Status: statemachine.StatusRunning, Nonce: 11, Since: gmin(0), Deadline: gmin(11)},
		{Occurrence: statemachine.Occurrence{ID: "manual-2", At: gmin(1), Manual: true}, Attempt: 1, Status: statemachine.StatusLaunching, Nonce: 12, Since: gmin(1), Deadline: gmin(12)},
		{Occurrence: goldenOccurrence(gmin(5)), Attempt: 2, Status: statemachine.StatusRetrying, Nonce: 13, Since: gmin(6), RetryAt: gmin(7), Deadline: gmin(7).Add(30 * time.Second)},
		{Occurrence: goldenOccurrence(gmin(8)), Attempt: 1, Status: statemachine.StatusQueued, Nonce: 14, Since: gmin(8), Deadline: gmin(8).Add(30 * time.Second)},
	},
	Triggers: 2, LastEnded: gmin(-1), WatchdogTimerTs: gmin(7).Add(30 * time.Second),
}

// goldenPolled is a job whose attempt an asynchronous target runs, with
// its next poll scheduled: the poll fields were added within version 1.
var goldenPolled = statemachine.JobState{
	State: statemachine.Running, TickNonce: 77, TickAt: gmin(60), NextAt: gmin(60), Cursor: gmin(0),
	Active: []statemachine.Invocation{
		{Occurrence: goldenOccurrence(gmin(0)), Attempt: 1, Status: statemachine.StatusRunning, Nonce: 11, Since: gmin(0), Deadline: gmin(30),
			PollNonce: -9876543210, PollAt: gmin(3)},
	},
	WatchdogTimerTs: gmin(3).Add(30 * time.Second),
}

// goldenBackfilled is a job running the second occurrence of a backfill
// of [-3h, -1h): the backfill fields were added within version 1.
var goldenBackfilled = statemachine.JobState{
	State: statemachine.Running, TickNonce: 78, TickAt: gmin(60), NextAt: gmin(60), Cursor: gmin(0),
	Active: []statemachine.Invocation{
		{Occurrence: statemachine.Occurrence{ID: statemachine.OccurrenceID(gmin(-120)), At: gmin(-120), Backfill: true},
			Attempt: 1, Status: statemachine.StatusRunning, Nonce: 12, Since: gmin(0), Deadline: gmin(30)},
	},
	Backfill:        &statemachine.Backfill{From: gmin(-180), To: gmin(-60), Next: gmin(-120).Add(time.Nanosecond)},
	WatchdogTimerTs: gmin(30),
}

var goldenScheduled = statemachine.JobState{
	State: statemachine.Scheduled, TickNonce: 1234567890123, TickAt: gmin(5).Add(1500 * time.Millisecond), NextAt: gmin(5),
	Cursor: gmin(0), Failures: 1, Triggers: 2, LastEnded: gmin(-3), WatchdogTimerTs: gmin(5).Add(31500 * time.Millisecond),
}

func disabledGolden(r statemachine.Reason) statemachine.JobState {
	return statemachine.JobState{State: statemachine.Disabled, Reason: r, Cursor: gmin(0)}
}

var goldenAutoDisabled = statemachine.JobState{
	State: statemachine.Disabled, Reason: statemachine.Reason{Kind: statemachine.ReasonAutoDisabled, Note: "after 3 failed invocations in a row"},
	Failures: 3, Cursor: gmin(0), LastEnded: gmin(-1),
}

var goldenPaused = statemachine.JobState{
	State: statemachine.Paused, Reason: statemachine.Reason{Kind: statemachine.ReasonPaused, Note: "paused for the migration"},
	Cursor: gmin(0), LastEnded: gmin(-10),
}

// goldenPausedUntil is a job with a cap on its runs, paused until a set
// time: the runs, the pause's end and the audit's until were added within
// version 1.
var goldenPausedUntil = statemachine.JobState{
	State: statemachine.Paused, Reason: statemachine.Reason{Kind: statemachine.ReasonPaused, Note: "quarter close"},
	TickNonce: 99, TickAt: gmin(120), Cursor: gmin(0), Runs: 7, PausedUntil: gmin(120), WatchdogTimerTs: gmin(120).Add(30 * time.Second),
}

// stateGoldens lists every file of testdata/state and what it decodes to.
var stateGoldens = map[string]jobState{
	"v0-scheduled.json":          {m: goldenScheduled},
	"v0-running.json":            {m: goldenRunning},
	"v0-paused.json":             {m: goldenPaused},
	"v0-removed.json":            {m: disabledGolden(statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig})},
	"v0-disabled-in-config.json": {m: disabledGolden(statemachine.Reason{Kind: statemachine.ReasonDisabledInConfig})},
	"v0-auto-disabled.json":      {m: goldenAutoDisabled},
	// Words 313afd2 never wrote itself: kept, and the job stays disabled
	// (statemachine.ReasonUntyped).
	"v0-disabled-other.json": {m: disabledGolden(statemachine.Reason{Kind: statemachine.ReasonUntyped, Note: "turned off by hand"})},

	"v1-empty.json":     {},
	"v1-scheduled.json": {m: goldenScheduled},
	"v1-running.json": {m: goldenRunning, health: Health{
		TaskFailures: 3, LastError: "store: conflict", LastErrorAt: gmin(9).Add(250 * time.Millisecond),
	}},
	"v1-paused.json":     {m: goldenPaused},
	"v1-polled.json":     {m: goldenPolled},
	"v1-backfilled.json": {m: goldenBackfilled},
	"v1-paused-audited.json": {m: goldenPaused, audit: []AuditEntry{
		{At: gmin(-20), By: "user:alice@example.com", Action: ActionTrigger, Invocation: "manual-1"},
		{At: gmin(-15), By: "serviceAccount:ci@proj.iam.gserviceaccount.com", Action: ActionAbort},
		{At: gmin(-10), By: "user:alice@example.com", Action: ActionPause, Reason: "paused for the migration"},
	}},
	"v1-paused-until.json": {m: goldenPausedUntil, audit: []AuditEntry{
		{At: gmin(0), By: "user:alice@example.com", Action: ActionPause, Reason: "quarter close", Until: gmin(120)},
	}},
	"v1-removed.json":            {m: disabledGolden(statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig})},
	"v1-disabled-in-config.json": {m: disabledGolden(statemachine.Reason{Kind: statemachine.ReasonDisabledInConfig, Note: "by the owners"})},
	"v1-auto-disabled.json":      {m: goldenAutoDisabled},
	"v1-disabled-v0.json":        {m: disabledGolden(statemachine.Reason{Kind: statemachine.ReasonUntyped, Note: "turned off by hand"})},
}

var goldenFullDefinition = Definition{
	Schedule: "0 9 * * MON-FRI", TimeZone: "Europe/Berlin", Gap: "skip", Repeat: "both",
	Policy: statemachine.Policy{
		Overlap: statemachine.OverlapAllow, MaxConcurrent: 3, CatchupWindow: 2 * time.Hour, Timeout: 90 * time.Second,
		MaxAttempts: 4, MinBackoff: 1500 * time.Millisecond, MaxBackoff: 10 * time.Minute,
		AutoDisableAfter: 5, Jitter: 45 * time.Second, Idempotent: true,
	},
	Target: "url_fetch", Spec: json.RawMessage(`{"url":"https://example.com/run","method":"POST","headers":{"X-A":"b"}}`),
}

// definitionGoldens lists every file of testdata/definition and what it
// decodes to.
var definitionGoldens = map[string]Definition{
	"v0-minimal.json": {Schedule: "@every 5m", Target: "noop"},
	"v0-full.json":    goldenFullDefinition,

	"v1-minimal.json": {Schedule: "@every 5m", Target: "noop"},
	// The revision, added within version 1.
	"v1-revision.json": {Schedule: "@every 5m", Target: "noop", Revision: "0123456789abcdef0123456789abcdef01234567"},
	"v1-full.json":     goldenFullDefinition,
	"v1-nanoseconds.json": {Schedule: "* * * * *", Target: "noop", Policy: statemachine.Policy{
		Timeout: time.Hour + time.Nanosecond, MinBackoff: time.Microsecond, Overlap: statemachine.OverlapReplace,
	}},
	// The job's notify, added within version 1.
	"v1-notify.json": {Schedule: "@every 5m", Target: "noop", Notify: &Notify{
		URL: "https://hooks.slack.com/services/T0/B0/x", Format: "slack", On: []string{"failure", "recovery"}, LongRun: 90 * time.Minute,
	}},
	// The active window, the calendars and the cap on runs, added within
	// version 1.
	"v1-bounded.json": {Schedule: "30 9 * * *", TimeZone: "America/New_York", Target: "noop",
		Policy:        statemachine.Policy{MaxRuns: 12},
		Active:        Window{From: "2026-01-05", Until: "2026-06-30T17:00:00-04:00"},
		SkipCalendars: []*schedule.Calendar{goldenCalendar("holidays", "", nil, "2026-01-01", "2026-01-01", "2026-12-24", "2026-12-26")},
		OnlyCalendars: []*schedule.Calendar{goldenCalendar("business-days", "Europe/London", []time.Weekday{1, 2, 3, 4, 5})}},
	// Retention, added within version 1.
	"v1-retention.json": {Schedule: "@every 1s", Target: "noop", Retention: Retention{
		Age: 36 * time.Hour, Count: 500, FailureAge: 2160 * time.Hour, FailureCount: 2000,
	}},
	// The objectives, added within version 1: a job's own, and one that
	// opts out of the server's.
	"v1-slo.json": {Schedule: "*/5 * * * *", Target: "noop", Objective: slo.Objective{
		Lateness: 30 * time.Second, OnTime: 0.995, Success: 0.99, Window: 28 * 24 * time.Hour,
	}},
	"v1-slo-none.json": {Schedule: "@every 5m", Target: "noop", Objective: slo.Objective{None: true}},
}

func goldenCalendar(name, zone string, weekdays []time.Weekday, dates ...string) *schedule.Calendar {
	var loc *time.Location
	if zone != "" {
		loc, _ = schedule.LoadZone(zone)
	}
	var rs []schedule.DateRange
	for i := 0; i < len(dates); i += 2 {
		f, _ := schedule.ParseDate(dates[i])
		l, _ := schedule.ParseDate(dates[i+1])
		rs = append(rs, schedule.DateRange{First: f, Last: l})
	}
	c, err := schedule.NewCalendar(name, loc, weekdays, rs)
	if err != nil {
		panic(err)
	}
	return c
}

// projectGoldens lists every file of testdata/project and what it decodes
// to.
var projectGoldens = map[string]Project{
	"v1-empty.json": {ID: "golden"},
	"v1-grants.json": {ID: "golden", Revision: "4f2a9c", AppliedAt: gmin(0), Grants: []access.RoleGrant{
		{Role: access.Owner, Members: []access.Member{"user:alice@example.com", "group:sre"}},
		{Role: access.Triggerer, Members: []access.Member{"serviceAccount:ci@proj.iam.gserviceaccount.com"}, Jobs: []string{"nightly", "hourly"}},
		{Role: access.Reader, Members: []access.Member{"anonymous"}, Jobs: []string{"status"}},
	}},
	// The config status, added within version 1.
	"v1-status.json": {ID: "golden", Revision: "4f2a9c", AppliedAt: gmin(0), File: "configs/golden.yaml", Jobs: 3,
		Error: "configs/golden.yaml:7: jobs[1].schedule: bad field", ErrorAt: gmin(5),
		Grants: []access.RoleGrant{{Role: access.Owner, Members: []access.Member{"user:alice@example.com"}}}},
	"v1-error-only.json": {ID: "golden", File: "configs/golden.yaml", Error: "configs/golden.yaml:1: not YAML", ErrorAt: gmin(5)},
	// The commits, added within version 1.
	"v1-commit.json": {ID: "golden", Revision: "0123456789abcdef0123456789abcdef01234567", AppliedAt: gmin(0), File: "projects/golden.yaml", Jobs: 1,
		Error: `projects/golden.yaml:7: jobs[0].schedule: bad field (at commit 89abcdef0123: "next")`, ErrorAt: gmin(5),
		Commit: &Commit{SHA: "0123456789abcdef0123456789abcdef01234567", Author: "Ada Owner <ada@example.com>", Time: gmin(-1), Subject: "golden: hourly",
			Link: "https://example.com/blob/0123456789abcdef0123456789abcdef01234567/projects/golden.yaml"},
		ErrorCommit: "89abcdef0123456789abcdef0123456789abcdef"},
	// The changes of the last applied revision, added within version 1.
	"v1-changes.json": {ID: "golden", Revision: "4f2a9c", AppliedAt: gmin(0), File: "configs/golden.yaml", Jobs: 52,
		Changes: &Changes{Added: []string{"hourly", "nightly"}, AddedCount: 2, Changed: []string{"report"}, ChangedCount: 1,
			Removed: []string{"old-1", "old-2"}, RemovedCount: 70}},
	// The changed jobs' definitions before, added within version 1.
	"v1-changes-before.json": {ID: "golden", Revision: "4f2a9d", AppliedAt: gmin(0), File: "configs/golden.yaml", Jobs: 2,
		Changes: &Changes{Changed: []string{"report", "sync"}, ChangedCount: 2,
			Before: map[string]string{"report": "9e4a1c0f3b2d6e8a7c5b4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a"}}},
}

// TestStoredProjectGoldens: every stored version of the project record
// decodes to what it held, and the current version encodes as its goldens
// say.
func TestStoredProjectGoldens(t *testing.T) {
	checkGoldens(t, "project", projectVersion, projectGoldens, func(b []byte) (Project, error) { return decodeProject("golden", b) }, encodeProject)
}

// TestStoredProjectsThisReleaseCannotReadAreRefused: a record of a later
// version, or with a role or member this release does not know, is an
// error: never grants read wider than they were written.
func TestStoredProjectsThisReleaseCannotReadAreRefused(t *testing.T) {
	for _, b := range []string{
		`{"v":2,"grants":[]}`,
		`{"v":1,"grants":[{"role":"admin","members":["user:a@example.com"]}]}`,
		`{"v":1,"grants":[{"role":"reader","members":["domain:example.com"]}]}`,
		`not json`,
	} {
		if p, err := decodeProject("p", []byte(b)); err == nil {
			t.Errorf("decodeProject(%s) = %+v; want an error", b, p)
		}
	}
}

// TestStoredStateGoldens: every stored version of the job state decodes
// to what it held, and the current version encodes as its goldens say.
func TestStoredStateGoldens(t *testing.T) {
	checkGoldens(t, "state", stateVersion, stateGoldens, decodeJobState, encodeJobState)
}

// TestStoredDefinitionGoldens: every stored version of the definition
// decodes to what it held, and the current version encodes as its goldens
// say. Invocation records hold the same encoding.
func TestStoredDefinitionGoldens(t *testing.T) {
	checkGoldens(t, "definition", definitionVersion, definitionGoldens, decodeDefinition, encodeDefinition)
}

func checkGoldens[T any](t *testing.T, dir string, current int, goldens map[string]T, decode func([]byte) (T, error), encode func(T) ([]byte, error)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		seen[filepath.Base(f)] = true
	}
	prefix := fmt.Sprintf("v%d-", current)
	for name, want := range goldens {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", dir, name)
			if !seen[name] && strings.HasPrefix(name, prefix) && *createGoldens {
				b, err := encode(want)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("created %s", path)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (a golden listed here must exist; -create-goldens writes the current version's)", err)
			}
			got, err := decode(b)
			if err != nil {
				t.Fatalf("decoding %s: %v", path, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s decodes to\n%+v\nwant\n%+v\nA stored %s no longer reads as it was written: every job holding one would change on upgrade.", path, got, want, dir)
			}
			if !strings.HasPrefix(name, prefix) {
				return
			}
			enc, err := encode(want)
			if err != nil {
				t.Fatal(err)
			}
			if string(enc) != string(b) {
				t.Errorf("the current %s encoding changed:\n got %s\nwant %s\n"+
					"Stored jobs hold the old bytes. If the change is compatible (a new field left out while zero), "+
					"it still must not change these bytes; otherwise bump the version, keep decoding version %d, "+
					"and add goldens for the new one.", dir, enc, b, current)
			}
		})
	}
	for name := range seen {
		if _, ok := goldens[name]; !ok {
			t.Errorf("testdata/%s/%s: no expected value listed for it", dir, name)
		}
	}
}

// TestStoredShapesOfALaterVersionAreRefused: a state or definition that a
// later release wrote is an error naming its version, not a job read
// wrong (a rollback past a format change).
func TestStoredShapesOfALaterVersionAreRefused(t *testing.T) {
	if _, err := decodeJobState([]byte(`{"v":99,"state":"SCHEDULED"}`)); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("state of version 99: err %v, want one naming the version", err)
	}
	if _, err := decodeDefinition([]byte(`{"v":99,"schedule":"* * * * *","target":"noop"}`)); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("definition of version 99: err %v, want one naming the version", err)
	}
	if _, err := decodeDefinition([]byte(`{"v":1,"schedule":"* * * * *","policy":{"timeout":"soon"},"target":"noop"}`)); err == nil || !strings.Contains(err.Error(), "policy.timeout") {
		t.Errorf("definition with a bad duration: err %v, want one naming policy.timeout", err)
	}
}

// BenchmarkDecodeStored decodes a state and a definition of the version
// this release writes, as each job's first transaction after a start
// does.
//
//	go test ./engine -run '^$' -bench BenchmarkDecodeStored
func BenchmarkDecodeStored(b *testing.B) {
	for _, c := range []struct {
		golden string
		decode func([]byte) error
	}{
		{"state/v1-running.json", func(b []byte) error { _, err := decodeJobState(b); return err }},
		{"definition/v1-full.json", func(b []byte) error { _, err := decodeDefinition(b); return err }},
	} {
		b.Run(c.golden, func(b *testing.B) {
			enc, err := os.ReadFile(filepath.Join("testdata", c.golden))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := c.decode(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStoredShapesOfThisVersionThatDoNotDecodeAreRefused: a record of
// the version this release writes with a field of the wrong type is an
// error naming the field, from the one decode of it, never an empty state
// or definition taken as read.
func TestStoredShapesOfThisVersionThatDoNotDecodeAreRefused(t *testing.T) {
	if _, err := decodeJobState(fmt.Appendf(nil, `{"v":%d,"state":5}`, stateVersion)); err == nil || !strings.Contains(err.Error(), "state") {
		t.Errorf("state with a number for its state: err %v, want one naming the field", err)
	}
	if _, err := decodeDefinition(fmt.Appendf(nil, `{"v":%d,"schedule":5,"target":"noop"}`, definitionVersion)); err == nil || !strings.Contains(err.Error(), "schedule") {
		t.Errorf("definition with a number for its schedule: err %v, want one naming the field", err)
	}
}
