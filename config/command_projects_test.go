package config_test

import (
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/command"
	"github.com/sundial-cron/sundial/targets/noop"
)

// A project the operator did not name for commands cannot use the command
// target: its config is refused at load, naming the file, line and field,
// and nothing of it is applied; a named project's is accepted.
func TestParseRefusesCommandsOfProjectsNotNamed(t *testing.T) {
	t.Parallel()
	cmd, err := command.New(command.Options{Projects: []string{"ops"}, Cgroup: "none"})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]targets.Target{"noop": noop.Target{}, "command": cmd}
	const yaml = "jobs:\n  - id: beat\n    schedule: \"@hourly\"\n    noop: {}\n  - id: rotate\n    schedule: \"@hourly\"\n    command: {argv: [date]}\n"

	path, p, err := parseFile(t, "billing.yaml", yaml, targets)
	want := path + ":7: jobs[1].command: job billing/rotate: command: the server runs commands only for projects ops (--command-projects), not for project billing"
	if p != nil || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse(billing.yaml) = %v, %v; want no project and the error %q", p, err, want)
	}
	if _, p, err := parseFile(t, "ops.yaml", yaml, targets); err != nil || len(p.Jobs) != 2 {
		t.Errorf("Parse(ops.yaml) = %v; want its 2 jobs", err)
	}
}
