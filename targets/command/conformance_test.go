package command_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/command"
	"github.com/sundial-cron/sundial/targets/targettest"
)

// suiteLogLimit is the suite's target's LogLimit: small, so a few
// thousand lines of output pass it.
const suiteLogLimit = 1000

func TestConformance(t *testing.T) {
	t.Parallel()
	targettest.Run(t, targettest.Harness{
		New: func(*testing.T) targets.Target {
			return newTarget(t, command.Options{Grace: 100 * time.Millisecond, LogLimit: suiteLogLimit})
		},
		Succeeding: argv("true"),
		Launched:   targets.Succeeded,
		Failing:    argv("false"),
		Hang: func(t *testing.T) (json.RawMessage, <-chan struct{}) {
			fifo, started := startSignal(t)
			return marshal(t, command.Spec{Argv: []string{"/bin/sh", "-c", `echo > "$1"; sleep 1000`, "sh", fifo}}), started
		},
		// The key travels in SUNDIAL_INVOCATION_ID; each attempt appends
		// it to a file, one line each (O_APPEND keeps lines whole).
		Witness: func(t *testing.T) (json.RawMessage, func() []string) {
			file := filepath.Join(t.TempDir(), "keys")
			return marshal(t, command.Spec{Argv: []string{"/bin/sh", "-c", `printf '%s\n' "$SUNDIAL_INVOCATION_ID" >> "$1"`, "sh", file}}), func() []string {
				b, err := os.ReadFile(file)
				if os.IsNotExist(err) {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				return strings.Fields(string(b))
			}
		},
		Noisy: argv("seq", "1", "100000"),
		// Head and tail, the marker between them, and the note a process
		// that outlives the group's SIGKILL leaves.
		LogLimit: suiteLogLimit + len("\n[... 9999999 bytes of output dropped ...]\n") +
			len("\n[output still open after SIGKILL: a process left the attempt's process group and may still run]\n"),
		BadSpecs: []targettest.BadSpec{
			{Spec: ``, Field: "command: bad spec"},
			{Spec: `{}`, Field: "command: argv is missing"},
			{Spec: `{"argv": []}`, Field: "command: argv is missing"},
			{Spec: `{"argv": [""]}`, Field: "argv[0] is empty"},
			{Spec: `{"argv": ["echo", "a\u0000b"]}`, Field: "argv[1] holds a NUL byte"},
			{Spec: `{"argv": "ls -l"}`, Field: "Spec.argv"},
			{Spec: `{"argv": ["echo", "hi"], "shell": true}`, Field: "with shell: true, argv must be one string (the script), not 2"},
			{Spec: `{"argv": ["ls"], "dir": "var/log"}`, Field: `bad dir "var/log": want an absolute path`},
			{Spec: `{"argv": ["ls"], "env": {"MY-VAR": "1"}}`, Field: `bad env name "MY-VAR"`},
			{Spec: `{"argv": ["ls"], "env": {"1X": "1"}}`, Field: `bad env name "1X"`},
			{Spec: `{"argv": ["ls"], "env": {"SUNDIAL_ATTEMPT": "9"}}`, Field: "the SUNDIAL_* variables are set by Sundial"},
			{Spec: `{"argv": ["ls"], "env": {"X": "a\u0000"}}`, Field: "env X: the value holds a NUL byte"},
			{Spec: `{"argv": ["ls"], "max_memory_mb": -1}`, Field: "bad max_memory_mb -1"},
			{Spec: `{"argv": ["ls"], "max_memory_mb": 2560000}`, Field: "bad max_memory_mb 2560000: want 0 (no limit) to 1048576"},
			{Spec: `{"argv": ["ls"], "max_memory_mb": "256"}`, Field: "Spec.max_memory_mb"},
			{Spec: `{"argv": ["ls"], "max_processes": -1}`, Field: "bad max_processes -1"},
			{Spec: `{"argv": ["ls"], "max_processes": 4194305}`, Field: "bad max_processes 4194305: want 0 (the server's default) to 4194304"},
			{Spec: `{"argv": ["ls"], "max_processes": 1.5}`, Field: "Spec.max_processes"},
			{Spec: `{"argv": ["ls"], "timeout": "1m"}`, Field: `unknown field "timeout"`},
			{Spec: `{"argv": ["ls"]} []`, Field: "more than one JSON value"},
		},
		// Check allows line breaks in argv, dir and env values, and the
		// messages of a program that cannot be found or started quote them.
		LineBreaks: []json.RawMessage{
			json.RawMessage(`{"argv": ["no-such-program\nsundial"]}`),
			json.RawMessage(`{"argv": ["/no/such\nprogram"]}`),
			json.RawMessage(`{"argv": ["no-such-program"], "env": {"PATH": "/usr/bin\n/bin"}}`),
			json.RawMessage(`{"argv": ["true"], "dir": "/no/such\ndir"}`),
		},
	})
}

func argv(args ...string) func(*testing.T) json.RawMessage {
	return func(t *testing.T) json.RawMessage { return marshal(t, command.Spec{Argv: args}) }
}

func marshal(t *testing.T, spec command.Spec) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startSignal makes a named pipe a script writes a line to once it has
// begun, and a channel closed when it has. A script that never writes
// leaves the reader blocked in open until the test ends, when it is let go.
func startSignal(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() {
		// Opening for reading blocks until the script opens it to write.
		if _, err := os.ReadFile(fifo); err == nil {
			close(started)
		}
	}()
	t.Cleanup(func() {
		// Unblocks a reader still waiting in open; fails harmlessly
		// (ENXIO) when there is none.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return fifo, started
}
