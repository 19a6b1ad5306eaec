package config_test

import (
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// The mistakes people make writing a config are reported at the line to
// fix, with what they most likely meant. Before, a mis-indented line was
// reported at line 1 (where the parser's block began), an unquoted
// @hourly as a character that "cannot start any token", a misspelt key
// with only the list of known ones, and a misspelt field of a target at
// the target's line.
func TestConfigMistakesAreTaughtAtTheirLine(t *testing.T) {
	for _, c := range []struct {
		name string
		yaml string
		want string // after the file's name
	}{
		{"a line indented 3 spaces among 2 and 4",
			"jobs:\n  - id: a\n    schedule: \"* * * * *\"\n   noop: {}\n",
			":4: indented 3 spaces, between the 2 and 4 of the lines before it"},
		{"a line indented 1 space among 0 and 2, further down",
			"jobs:\n  - id: a\n    schedule: \"* * * * *\"\n    noop: {}\n roles: []\n",
			":5: indented 1 space, between the 0 and 2 of the lines before it"},
		{"an unquoted @hourly",
			"jobs:\n  - id: a\n    schedule: @hourly\n    noop: {}\n",
			`:3: a value starting with @ must be quoted: schedule: "@hourly"`},
		{"an unquoted * schedule",
			"jobs:\n  - id: a\n    schedule: * * * * *\n    noop: {}\n",
			`:3: a value starting with * must be quoted, or YAML reads it as an alias: schedule: "* * * * *"`},
		{"an unquoted @ on a line too long to quote back",
			"jobs:\n  - id: a\n    schedule: @hourly" + strings.Repeat(" ", 200) + "x\n    noop: {}\n",
			":3: bad YAML: found character that cannot start any token"},
		{"a misspelt key, its letters right but the underscore",
			"jobs:\n  - id: a\n    schedule: \"* * * * *\"\n    timezone: UTC\n    noop: {}\n",
			":4: jobs[0].timezone: unknown field: did you mean time_zone?"},
		{"a key one letter off",
			"jobs:\n  - id: a\n    schedul: \"* * * * *\"\n    noop: {}\n",
			":3: jobs[0].schedul: unknown field: did you mean schedule?"},
		{"a top-level key one letter off",
			"job:\n  - id: a\n    schedule: \"* * * * *\"\n    noop: {}\n",
			":1: job: unknown field: did you mean jobs?"},
		{"a key nothing is near",
			"jobs:\n  - id: a\n    schedule: \"* * * * *\"\n    colour: blue\n    noop: {}\n",
			":4: jobs[0].colour: unknown field (want one of"},
		{"a misspelt field of a target, at its own line",
			"jobs:\n  - id: a\n    schedule: \"* * * * *\"\n    url_fetch:\n      url: https://example.com\n      metod: POST\n",
			`:6: jobs[0].url_fetch.metod: unknown field (`},
	} {
		_, err := config.Parse("billing.yaml", []byte(c.yaml), allTargets())
		if err == nil || !strings.Contains(err.Error(), "billing.yaml"+c.want) {
			t.Errorf("%s: %v\nwant an error saying %q", c.name, err, "billing.yaml"+c.want)
		}
	}
}
