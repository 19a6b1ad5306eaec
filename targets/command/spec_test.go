package command_test

import (
	"encoding/json"
	"testing"

	"github.com/sundial-cron/sundial/targets/command"
)

// The specs Check accepts. The specs it refuses, and Launch's refusing
// them alike, are the conformance suite's BadSpecs (conformance_test.go).
func TestCheckAccepts(t *testing.T) {
	t.Parallel()
	tgt := newTarget(t, command.Options{})
	for _, tc := range []struct {
		name string
		spec string
	}{
		{"argv alone", `{"argv": ["/usr/sbin/logrotate", "/etc/logrotate.conf"]}`},
		{"every field", `{"argv": ["logrotate"], "dir": "/var/log", "env": {"LANG": "C", "_X1": ""}, "max_memory_mb": 256, "max_processes": 64}`},
		{"a shell script", `{"argv": ["echo hi | wc -c"], "shell": true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := tgt.Check(json.RawMessage(tc.spec)); err != nil {
				t.Errorf("Check(%s) = %v; want nil", tc.spec, err)
			}
		})
	}
}
