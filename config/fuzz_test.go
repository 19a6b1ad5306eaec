package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// FuzzParse: no input makes Parse panic, and every error it returns names
// the file.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		job,
		"jobs:\n  - id: a\n    schedule: \"H 4 * * *\"\n    time_zone: Europe/Paris\n    dst: {gap: skip, repeat: both}\n    jitter: 1m\n    command: {argv: [date], env: {A: b}}\n",
		"jobs: [{id: a, schedule: '@every 1s', noop: {sleep: 1s}}, {id: a}]\n",
		"a: &a [*a, *a]\nb: &b [*a, *a]\njobs:\n  - id: x\n    schedule: '@hourly'\n    noop: {x: [*b, *b]}\n",
		"jobs:\n  - <<: {id: a}\n",
		"jobs:\n\t- id: a\n",
		"--- !!map\n? [a]\n: b\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		p, err := config.Parse("fuzz.yaml", []byte(data), allTargets())
		if err == nil {
			if p == nil || p.ID != "fuzz" {
				t.Fatalf("no error and project %+v", p)
			}
			return
		}
		var es config.Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("error %v (%T), want config.Errors", err, err)
		}
		for _, e := range es {
			if e.File != "fuzz.yaml" || !strings.HasPrefix(e.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", e.Error())
			}
		}
	})
}
