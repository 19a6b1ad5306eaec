package config_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
)

// parseFile writes content to a real file named name and parses it back.
func parseFile(t *testing.T, name, content string, targets map[string]targets.Target) (string, *config.Project, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := config.Parse(path, data, targets)
	return path, p, err
}

// job is a valid job to build a broken one from; its lines are 2 to 4.
const job = `jobs:
  - id: a
    schedule: "*/5 * * * *"
    noop: {}
`

// manyJobs is the jobs j<first> to j<first+n-1>, each with the extra
// lines: in a file that starts with "jobs:", job i's lines are 2+4i to
// 5+4i with one extra line.
func manyJobs(first, n int, extra string) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "  - id: j%d\n    schedule: \"*/5 * * * *\"\n    noop: {}\n%s", i, extra)
	}
	return b.String()
}

// TestParseKeepsRetentionUpToItsBounds: a job may keep 400 days and
// 100,000 records of each kind, and a project's jobs 1,000,000 records
// beyond the 1,000 of each kind every job may keep; a count at the
// default spelled out draws nothing from that pool.
func TestParseKeepsRetentionUpToItsBounds(t *testing.T) {
	t.Parallel()
	yaml := "jobs:\n" + manyJobs(0, 10, "    retention: {age: 9600h, count: 100000, failures: {age: 9600h, count: 1000}}\n") +
		manyJobs(10, 5000, "    retention: {count: 1000}\n")
	_, p, err := parseFile(t, "billing.yaml", yaml, allTargets())
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Jobs[9].Definition.Retention; r != (engine.Retention{Age: 9600 * time.Hour, Count: 100000, FailureAge: 9600 * time.Hour, FailureCount: 1000}) {
		t.Errorf("the retention read: %+v", r)
	}
}

func TestParseRefusesWithFileLineAndField(t *testing.T) {
	t.Parallel()
	noopOnly := map[string]targets.Target{"noop": noop.Target{}}
	for _, tc := range []struct {
		name    string
		file    string // "billing.yaml" unless set
		yaml    string
		targets map[string]targets.Target // allTargets() unless set
		want    string                    // after the file's path: ":line: field: " and the start of the message
	}{
		{"an unknown field of a job", "", job + "    colour: blue\n", nil, ":5: jobs[0].colour: unknown field"},
		{"an unknown field at the top", "", job + "owner: me\n", nil, ":5: owner: unknown field (want one of jobs, roles, calendars)"},
		{"an unknown field in retries", "", job + "    retries: {attempts: 3}\n", nil, ":5: jobs[0].retries.attempts: unknown field"},
		{"an unknown field in dst", "", job + "    dst: {gaps: skip}\n", nil, ":5: jobs[0].dst.gaps: unknown field"},
		{"a notify without a webhook", "", job + "    notify: {format: slack}\n", nil, ":5: jobs[0].notify.webhook: missing"},
		{"a notify webhook that is not a URL", "", job + "    notify: {webhook: hooks.example.com/x}\n", nil, `:5: jobs[0].notify.webhook: "hooks.example.com/x": want an http(s)://HOST/... URL`},
		{"a notify format no one reads", "", job + "    notify: {webhook: \"https://h.example.com/x\", format: teams}\n", nil, `:5: jobs[0].notify.format: "teams": want one of generic, slack, google_chat`},
		{"a notify transition there is not", "", job + "    notify:\n      webhook: https://h.example.com/x\n      on: [failure, paging]\n", nil, `:7: jobs[0].notify.on: "paging": want failure and recovery`},
		{"a notify with nothing to tell", "", job + "    notify:\n      webhook: https://h.example.com/x\n      on: []\n", nil, `:7: jobs[0].notify.on: empty`},
		{"a long run too short", "", job + "    notify:\n      webhook: https://h.example.com/x\n      long_run: 30s\n", nil, `:7: jobs[0].notify.long_run: 30s: want from 1m to 24h0m0s`},
		{"an unknown field of notify", "", job + "    notify: {url: \"https://h.example.com/x\"}\n", nil, ":5: jobs[0].notify.url: unknown field"},
		{"a field given twice", "", job + "    schedule: \"@hourly\"\n", nil, ":5: jobs[0].schedule: given twice (first at line 3)"},
		{"a number that is a string", "", job + "    overlap: allow\n    max_concurrent: \"2\"\n", nil, `:6: jobs[0].max_concurrent: want a whole number, got the string "2"`},
		{"a bool that is a word", "", job + "    idempotent: yes\n", nil, `:5: jobs[0].idempotent: want true or false, got the string "yes"`},
		{"a schedule that is a number", "", "jobs:\n  - id: a\n    schedule: 5\n    noop: {}\n", nil, ":3: jobs[0].schedule: want a string, got the number 5"},
		{"jobs that are not a list", "", "jobs: {id: a}\n", nil, ":1: jobs: want a list of jobs, got a mapping"},
		{"a job that is not a mapping", "", "jobs:\n  - a\n", nil, `:2: jobs[0]: want a mapping, got the string "a"`},
		{"no jobs field", "", "{}\n", nil, ":1: jobs: missing"},
		{"a duplicate job id", "", job + "  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n", nil, `:5: jobs[1].id: "a" is used twice (first at line 2)`},
		{"a missing id", "", "jobs:\n  - schedule: \"@hourly\"\n    noop: {}\n", nil, ":2: jobs[0].id: missing"},
		{"a bad id", "", "jobs:\n  - id: a/b\n    schedule: \"@hourly\"\n    noop: {}\n", nil, `:2: jobs[0].id: "a/b": want 1 to 100 of`},
		{"an id that is a path step", "", "jobs:\n  - id: ..\n    schedule: \"@hourly\"\n    noop: {}\n", nil, `:2: jobs[0].id: "..": want`},
		{"a missing schedule", "", "jobs:\n  - id: a\n    noop: {}\n", nil, ":2: jobs[0].schedule: missing"},
		{"a bad schedule", "", "jobs:\n  - id: a\n    schedule: \"61 * * * *\"\n    noop: {}\n", nil, ":3: jobs[0].schedule: "},
		{"a bad zone", "", job + "    time_zone: Mars/Olympus\n", nil, `:5: jobs[0].time_zone: unknown time zone "Mars/Olympus"`},
		{"a bad DST gap policy", "", job + "    dst: {gap: jump}\n", nil, ":5: jobs[0].dst.gap: "},
		{"a bad DST repeat policy", "", job + "    dst:\n      repeat: twice\n", nil, ":6: jobs[0].dst.repeat: "},
		{"a bad overlap", "", job + "    overlap: never\n", nil, `:5: jobs[0].overlap: "never": want skip, queue_one, allow or replace`},
		{"a duration without a unit", "", job + "    timeout: 10\n", nil, ":5: jobs[0].timeout: want a duration such as 90s or 10m, got the number 10"},
		{"a duration that is not one", "", job + "    catchup_window: a while\n", nil, `:5: jobs[0].catchup_window: want a duration such as 90s or 10m, got "a while"`},
		{"a zero timeout", "", job + "    timeout: 0s\n", nil, ":5: jobs[0].timeout: want a positive duration"},
		{"a negative timeout", "", job + "    timeout: -1m\n", nil, ":5: jobs[0].timeout: want a duration that is not negative"},
		{"a negative catch-up window", "", job + "    catchup_window: -5s\n", nil, ":5: jobs[0].catchup_window: want a duration that is not negative"},
		{"a negative jitter", "", job + "    jitter: -1s\n", nil, ":5: jobs[0].jitter: want a duration that is not negative"},
		{"a negative auto-disable", "", job + "    auto_disable_after: -1\n", nil, ":5: jobs[0].auto_disable_after: want a number that is not negative, got -1"},
		{"an unknown field in retention", "", job + "    retention: {days: 3}\n", nil, ":5: jobs[0].retention.days: unknown field"},
		{"a zero retention count", "", job + "    retention: {count: 0}\n", nil, ":5: jobs[0].retention.count: want at least 1; leave it out for the server's default"},
		{"a zero retention age of failures", "", job + "    retention:\n      failures: {age: 0s}\n", nil, ":6: jobs[0].retention.failures.age: want a positive duration"},
		{"a retention age without a unit", "", job + "    retention: {age: 30}\n", nil, ":5: jobs[0].retention.age: want a duration such as 90s or 10m, got the number 30"},
		{"a retention that keeps everything for ever", "", job + "    retention: {age: 876000h, count: 2000000000}\n", nil, ":5: jobs[0].retention.age: 876000h0m0s: want at most 9600h0m0s (400 days)"},
		{"a retention count past the bound", "", job + "    retention: {count: 100001}\n", nil, ":5: jobs[0].retention.count: 100001: want at most 100000"},
		{"a retention age of failures past the bound", "", job + "    retention:\n      failures: {age: 9601h}\n", nil, ":6: jobs[0].retention.failures.age: 9601h0m0s: want at most 9600h0m0s (400 days)"},
		{"a retention count of failures past the bound", "", job + "    retention:\n      failures: {count: 1000000}\n", nil, ":6: jobs[0].retention.failures.count: 1000000: want at most 100000"},
		{"a project keeping more than its pool", "", "jobs:\n" + manyJobs(0, 11, "    retention: {count: 100000}\n"), nil,
			":45: jobs[10].retention.count: 100000: with it the project's jobs keep 1089000 records beyond the 1000 of each kind every job may keep; a project may keep at most 1000000 beyond them"},
		{"a negative max_attempts", "", job + "    retries: {max_attempts: -1}\n", nil, ":5: jobs[0].retries.max_attempts: want a number that is not negative"},
		{"zero max_attempts", "", job + "    retries: {max_attempts: 0}\n", nil, ":5: jobs[0].retries.max_attempts: want at least 1, got 0"},
		{"min_backoff above max_backoff", "", job + "    retries:\n      min_backoff: 5m\n      max_backoff: 1m\n", nil, ":6: jobs[0].retries.min_backoff: 5m0s is more than max_backoff 1m0s"},
		{"min_backoff above the default max_backoff", "", job + "    retries: {min_backoff: 1h}\n", nil, ":5: jobs[0].retries.min_backoff: 1h0m0s is more than max_backoff 10m0s"},
		{"max_concurrent without overlap: allow", "", job + "    max_concurrent: 2\n", nil, ":5: jobs[0].max_concurrent: applies only with overlap: allow (overlap is skip)"},
		{"max_concurrent of zero", "", job + "    overlap: allow\n    max_concurrent: 0\n", nil, ":6: jobs[0].max_concurrent: want at least 1, got 0"},
		{"a jitter as long as the period", "", job + "    jitter: 5m\n", nil, ":5: jobs[0].jitter: 5m0s is not smaller than 5m0s, the shortest gap"},
		{"a jitter longer than the shortest gap of an uneven schedule", "", "jobs:\n  - id: a\n    schedule: \"0,10 9 * * *\"\n    jitter: 15m\n    noop: {}\n", nil, ":4: jobs[0].jitter: 15m0s is not smaller than 10m0s"},
		{"a jitter longer than a gap the clocks make", "", "jobs:\n  - id: a\n    schedule: \"0 1,59 2,3 * * *\"\n    time_zone: America/New_York\n    jitter: 90s\n    noop: {}\n", nil, ":5: jobs[0].jitter: 1m30s is not smaller than 1m0s"},
		{"a jitter longer than a gap the clocks make past 20,000 fire times", "", "jobs:\n  - id: a\n    schedule: \"1,25,49 * 2,3 * * *\"\n    time_zone: America/New_York\n    jitter: 5s\n    noop: {}\n", nil, ":5: jobs[0].jitter: 5s is not smaller than 1s"},
		{"a jitter as long as an interval", "", "jobs:\n  - id: a\n    schedule: \"@every 30s\"\n    jitter: 30s\n    noop: {}\n", nil, ":4: jobs[0].jitter: 30s is not smaller than 30s"},
		{"no target", "", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n", nil, ":2: jobs[0]: no target: want exactly one of url_fetch, command, noop, swarming, pubsub"},
		{"two targets", "", job + "    command: {argv: [date]}\n", nil, ":5: jobs[0].command: a second target (the job has noop too)"},
		{"a target the server does not run", "", "jobs:\n  - id: rotate\n    schedule: \"@hourly\"\n    command: {argv: [date]}\n", noopOnly, ":4: jobs[0].command: job billing/rotate: target command is not enabled on this server"},
		{"swarming, on a server that does not run it", "", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    swarming: {}\n", nil, ":4: jobs[0].swarming: job billing/a: target swarming is not enabled"},
		{"a spec its target refuses", "", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {sleep: soon}\n", nil, `:4: jobs[0].noop: noop: bad sleep "soon"`},
		{"a spec field its target does not know", "", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    url_fetch:\n      url: http://x\n      verb: GET\n", nil, `:6: jobs[0].url_fetch.verb: unknown field (bad spec: json: unknown field "verb")`},
		{"a spec that is a list", "", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: [1]\n", nil, ":4: jobs[0].noop: want a mapping of the target's settings, got a list"},
		{"a spec number JSON cannot hold", "", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {sleep: .inf}\n", nil, ":4: jobs[0].noop.sleep: the number .inf cannot be written as JSON"},
		{"a merge key", "", "base: &b {schedule: \"@hourly\"}\n", nil, ":1: base: unknown field"},
		{"a merge key in a job", "", "jobs:\n  - <<: {schedule: \"@hourly\"}\n    id: a\n    noop: {}\n", nil, ":2: jobs[0]: keys must be field names; merge keys (<<) are not supported"},
		{"bad YAML", "", "jobs:\n  - id: [a\n", nil, ":1: bad YAML: did not find expected ',' or ']'"},
		{"a byte that is not UTF-8", "", job + "    description: caf\xe9 cr\xe8me\n", nil, ":5: column 21: byte 0xe9 is not UTF-8: a config file must be UTF-8"},
		{"a byte that is not UTF-8 after other characters", "", "jobs:\n  - id: \u00e9t\u00e9\xff\n", nil, ":2: column 12: byte 0xff is not UTF-8"},
		{"a UTF-16 file", "", "\xff\xfej\x00o\x00b\x00s\x00:\x00", nil, ":1: column 1: byte 0xff is not UTF-8 (a UTF-16 byte order mark)"},
		{"an empty file", "", "", nil, ": empty file: want a mapping with a jobs list"},
		{"two YAML documents", "", "jobs: []\n---\njobs: []\n", nil, ":2: a second YAML document"},
		{"a project id with capitals", "Billing.yaml", "jobs: []\n", nil, `: project id "Billing" (the file's name) must be lower-case`},
		{"an unknown role", "", job + "roles:\n  - role: admin\n    members: [user:a@example.com]\n", nil, `:6: roles[0].role: "admin": want reader, triggerer or owner`},
		{"a grant without a role", "", job + "roles:\n  - members: [user:a@example.com]\n", nil, ":6: roles[0].role: missing"},
		{"a grant without members", "", job + "roles:\n  - role: reader\n", nil, ":6: roles[0].members: missing"},
		{"a grant with no members", "", job + "roles:\n  - role: reader\n    members: []\n", nil, ":7: roles[0].members: empty"},
		{"a member that is not an identity", "", job + "roles:\n  - role: reader\n    members:\n      - alice@example.com\n", nil, `:8: roles[0].members[0]: member "alice@example.com": want user:<email>`},
		{"a member with a malformed email", "", job + "roles:\n  - role: owner\n    members: [\"user:not an email\"]\n", nil, `:7: roles[0].members[0]: member "user:not an email"`},
		{"a member that is local", "", job + "roles:\n  - role: owner\n    members: [local]\n", nil, `:7: roles[0].members[0]: member "local": local is the administrator`},
		{"a malformed group", "", job + "roles:\n  - role: owner\n    members: [\"group:Site Reliability\"]\n", nil, `:7: roles[0].members[0]: group "Site Reliability"`},
		{"anonymous as a triggerer", "", job + "roles:\n  - role: triggerer\n    members: [anonymous]\n", nil, ":7: roles[0].members[0]: anonymous may be granted reader only"},
		{"a grant naming a job the file lacks", "", job + "roles:\n  - role: reader\n    members: [user:a@example.com]\n    jobs: [a, b]\n", nil, `:8: roles[0].jobs[1]: "b" is not a job of this file`},
		{"a grant with an empty jobs list", "", job + "roles:\n  - role: reader\n    members: [user:a@example.com]\n    jobs: []\n", nil, ":8: roles[0].jobs: empty"},
		{"an unknown field of a grant", "", job + "roles:\n  - role: reader\n    members: [user:a@example.com]\n    until: 2027-01-01\n", nil, ":8: roles[0].until: unknown field"},
		{"roles that are not a list", "", job + "roles: {owner: [user:a@example.com]}\n", nil, ":5: roles: want a list of grants"},
		{"members that are not a list", "", job + "roles:\n  - role: reader\n    members: user:a@example.com\n", nil, `:7: roles[0].members: want a list of strings, got the string "user:a@example.com"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name, targets := tc.file, tc.targets
			if name == "" {
				name = "billing.yaml"
			}
			if targets == nil {
				targets = allTargets()
			}
			path, p, err := parseFile(t, name, tc.yaml, targets)
			if err == nil {
				t.Fatalf("parsed %+v, want an error", p)
			}
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v (%T), want config.Errors", err, err)
			}
			var found []string
			for _, e := range es {
				found = append(found, e.Error())
				if strings.HasPrefix(e.Error(), path+tc.want) {
					return
				}
			}
			t.Errorf("errors:\n%s\nwant one starting %q", strings.Join(found, "\n"), path+tc.want)
		})
	}
}

func TestParseReportsEveryErrorOfAFileInLineOrder(t *testing.T) {
	t.Parallel()
	path, _, err := parseFile(t, "billing.yaml", `jobs:
  - id: a
    schedule: "61 * * * *"
    timeout: soon
    noop: {}
  - id: b
    schedule: "@hourly"
    time_zone: Nowhere/Land
  - id: a
    schedule: "@hourly"
    noop: {}
`, allTargets())
	var es config.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v, want config.Errors", err)
	}
	var got []string
	for _, e := range es {
		got = append(got, strings.TrimPrefix(e.Error(), path))
	}
	want := []string{":3: jobs[0].schedule:", ":4: jobs[0].timeout:", ":6: jobs[1]: no target", ":8: jobs[1].time_zone:", ":9: jobs[2].id: \"a\" is used twice"}
	if len(got) != len(want) {
		t.Fatalf("errors:\n%s\nwant %d of them", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d is %q, want it to start %q", i, got[i], want[i])
		}
	}
}

func TestParseMapsEveryFieldToTheDefinition(t *testing.T) {
	t.Parallel()
	_, p, err := parseFile(t, "billing.yaml", `jobs:
  - id: nightly-report
    schedule: "30 2 * * *"
    time_zone: America/New_York
    dst: {gap: shift, repeat: first}
    overlap: allow
    max_concurrent: 3
    catchup_window: 15m
    timeout: 2m
    retries: {max_attempts: 4, min_backoff: 5s, max_backoff: 1m}
    auto_disable_after: 10
    jitter: 30s
    idempotent: true
    retention: {age: 720h, count: 500, failures: {age: 2160h, count: 2000}}
    url_fetch:
      url: https://example.com/report
      method: POST
      headers: {Content-Type: application/json}
      body: '{"kind": "nightly"}'
      success_codes: [200, 202]
  - id: rotate-logs
    schedule: "H 4 * * *"
    disabled: true
    command:
      argv: ["/usr/sbin/logrotate", "/etc/logrotate.conf"]
      dir: /var/log
      env: {LANG: C}
      max_memory_mb: 256
  - id: heartbeat
    schedule: "@every 30s"
    noop:
`, allTargets())
	if err != nil {
		t.Fatal(err)
	}
	defaults := statemachine.Policy{Overlap: statemachine.OverlapSkip, MaxConcurrent: 1, MaxAttempts: 1, MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Minute}
	want := []engine.Job{
		{ID: "billing/nightly-report", Definition: engine.Definition{
			Schedule: "30 2 * * *", TimeZone: "America/New_York", Gap: "shift", Repeat: "first",
			Policy: statemachine.Policy{
				Overlap: statemachine.OverlapAllow, MaxConcurrent: 3, CatchupWindow: 15 * time.Minute, Timeout: 2 * time.Minute,
				MaxAttempts: 4, MinBackoff: 5 * time.Second, MaxBackoff: time.Minute,
				AutoDisableAfter: 10, Jitter: 30 * time.Second, Idempotent: true,
			},
			Retention: engine.Retention{Age: 720 * time.Hour, Count: 500, FailureAge: 2160 * time.Hour, FailureCount: 2000},
			Target:    "url_fetch",
			Spec:      json.RawMessage(`{"body":"{\"kind\": \"nightly\"}","headers":{"Content-Type":"application/json"},"method":"POST","success_codes":[200,202],"url":"https://example.com/report"}`),
		}},
		{ID: "billing/rotate-logs", Disabled: true, Definition: engine.Definition{
			Schedule: "H 4 * * *", Policy: defaults, Target: "command",
			Spec: json.RawMessage(`{"argv":["/usr/sbin/logrotate","/etc/logrotate.conf"],"dir":"/var/log","env":{"LANG":"C"},"max_memory_mb":256}`),
		}},
		{ID: "billing/heartbeat", Definition: engine.Definition{
			Schedule: "@every 30s", Policy: defaults, Target: "noop", Spec: json.RawMessage(`{}`),
		}},
	}
	if p.ID != "billing" || len(p.Revision) != 64 {
		t.Errorf("project %q revision %q, want billing and a SHA-256", p.ID, p.Revision)
	}
	if !reflect.DeepEqual(p.Jobs, want) {
		for i := range max(len(p.Jobs), len(want)) {
			if i >= len(p.Jobs) || i >= len(want) || !reflect.DeepEqual(p.Jobs[i], want[i]) {
				t.Errorf("job %d:\n got %+v\nwant %+v", i, at(p.Jobs, i), at(want, i))
			}
		}
	}
}

func at(jobs []engine.Job, i int) any {
	if i < len(jobs) {
		j := jobs[i]
		return struct {
			engine.Job
			Spec string
		}{j, string(j.Definition.Spec)}
	}
	return nil
}

func TestParseGivesEqualDefinitionsForSpelledOutDefaults(t *testing.T) {
	t.Parallel()
	_, short, err := parseFile(t, "p.yml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n", allTargets())
	if err != nil {
		t.Fatal(err)
	}
	_, long, err := parseFile(t, "p.yml", `jobs:
  - id: a
    schedule: "@hourly"
    overlap: skip
    catchup_window: 0
    retries: {max_attempts: 1, min_backoff: 10s, max_backoff: 10m}
    auto_disable_after: 0
    jitter: 0s
    idempotent: false
    disabled: false
    noop:
`, allTargets())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(short.Jobs[0].Definition, long.Jobs[0].Definition) {
		t.Errorf("definitions differ:\n%+v\n%+v", short.Jobs[0].Definition, long.Jobs[0].Definition)
	}
	if short.Revision == long.Revision {
		t.Error("different files have one revision")
	}
}

func TestParseAcceptsAJitterBelowTheShortestGapAndAnEmptyProject(t *testing.T) {
	t.Parallel()
	for _, y := range []string{
		"jobs: []\n",
		"jobs:\n  - id: a\n    schedule: \"0,10 9 * * *\"\n    jitter: 9m59s\n    noop: {}\n",
		"jobs:\n  - id: a\n    schedule: \"*/5 * * * * *\"\n    jitter: 4s\n    noop: {}\n",
		"jobs:\n  - id: a\n    schedule: triggered\n    jitter: 1h\n    noop: {}\n",
	} {
		if _, _, err := parseFile(t, "ok.yaml", y, allTargets()); err != nil {
			t.Errorf("%q: %v", y, err)
		}
	}
}

// The shipped examples are valid with every target the server can run;
// `sundial validate examples/configs` checks them against the kinds this
// binary registers.
func TestExamplesAreValid(t *testing.T) {
	t.Parallel()
	files, err := config.ReadDir("../examples/configs")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example configs")
	}
	for _, f := range files {
		if f.Err != nil {
			t.Fatal(f.Err)
		}
		if _, err := config.Parse(f.Path, f.Data, allTargets()); err != nil {
			t.Error(err)
		}
	}
}

func TestParseReadsRoles(t *testing.T) {
	t.Parallel()
	_, p, err := parseFile(t, "billing.yaml", job+`  - id: b
    schedule: "@hourly"
    noop: {}
roles:
  - role: owner
    members: [user:Alice@Example.com, group:billing-oncall]
  - role: triggerer
    members: [serviceAccount:ci@proj.iam.gserviceaccount.com]
    jobs: [b]
  - role: reader
    members: [anonymous]
    jobs: [a]
`, allTargets())
	if err != nil {
		t.Fatal(err)
	}
	want := []access.RoleGrant{
		{Role: access.Owner, Members: []access.Member{"user:alice@example.com", "group:billing-oncall"}},
		{Role: access.Triggerer, Members: []access.Member{"serviceAccount:ci@proj.iam.gserviceaccount.com"}, Jobs: []string{"b"}},
		{Role: access.Reader, Members: []access.Member{"anonymous"}, Jobs: []string{"a"}},
	}
	if !reflect.DeepEqual(p.Grants, want) {
		t.Errorf("grants:\n%+v\nwant\n%+v", p.Grants, want)
	}
	_, p, err = parseFile(t, "billing.yaml", job, allTargets())
	if err != nil || p.Grants != nil {
		t.Errorf("a file without roles: grants %v, err %v; want none", p.Grants, err)
	}
}
