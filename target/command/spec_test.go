package command_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/target"
	"github.com/sundial-cron/sundial/target/command"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	tgt := command.New(command.Options{})
	for _, tc := range []struct {
		name string
		spec string
		want string // a substring of the error; "" for none
	}{
		{"argv alone", `{"argv": ["/usr/sbin/logrotate", "/etc/logrotate.conf"]}`, ""},
		{"every field", `{"argv": ["logrotate"], "dir": "/var/log", "env": {"LANG": "C", "_X1": ""}, "max_memory_mb": 256}`, ""},
		{"a shell script", `{"argv": ["echo hi | wc -c"], "shell": true}`, ""},
		{"no spec at all", ``, "command: bad spec"},
		{"no argv", `{}`, "command: argv is missing"},
		{"an empty argv", `{"argv": []}`, "command: argv is missing"},
		{"an empty program", `{"argv": [""]}`, "argv[0] is empty"},
		{"a NUL in an argument", `{"argv": ["echo", "a\u0000b"]}`, "argv[1] holds a NUL byte"},
		{"argv as a string", `{"argv": "ls -l"}`, "command: bad spec"},
		{"a shell script in two strings", `{"argv": ["echo", "hi"], "shell": true}`, "with shell: true, argv must be one string (the script), not 2"},
		{"a relative dir", `{"argv": ["ls"], "dir": "var/log"}`, `bad dir "var/log": want an absolute path`},
		{"an env name with a dash", `{"argv": ["ls"], "env": {"MY-VAR": "1"}}`, `bad env name "MY-VAR"`},
		{"an env name starting with a digit", `{"argv": ["ls"], "env": {"1X": "1"}}`, `bad env name "1X"`},
		{"a SUNDIAL_ variable", `{"argv": ["ls"], "env": {"SUNDIAL_ATTEMPT": "9"}}`, "the SUNDIAL_* variables are set by Sundial"},
		{"an env value with a NUL", `{"argv": ["ls"], "env": {"X": "a\u0000"}}`, "env X: the value holds a NUL byte"},
		{"a negative memory limit", `{"argv": ["ls"], "max_memory_mb": -1}`, "bad max_memory_mb -1"},
		{"a memory limit with extra zeros", `{"argv": ["ls"], "max_memory_mb": 2560000}`, "bad max_memory_mb 2560000: want 0 (no limit) to 1048576"},
		{"a memory limit as a string", `{"argv": ["ls"], "max_memory_mb": "256"}`, "command: bad spec"},
		{"an unknown field", `{"argv": ["ls"], "timeout": "1m"}`, `unknown field "timeout"`},
		{"trailing JSON", `{"argv": ["ls"]} []`, "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tgt.Check(json.RawMessage(tc.spec))
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Check(%s) = %v; want %q", tc.spec, err, tc.want)
			}
			if tc.want == "" {
				return
			}
			// Launch refuses the same spec with the same error, and starts
			// nothing.
			if res := tgt.Launch(t.Context(), request(tc.spec)); res.Status != target.Failed || res.Message != err.Error() {
				t.Errorf("Launch = %v %q; want Failed %q", res.Status, res.Message, err)
			}
		})
	}
}
