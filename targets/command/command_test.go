package command_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/command"
)

var occurrence = time.Date(2026, 3, 8, 2, 30, 0, 0, time.FixedZone("EST", -5*3600))

func request(spec any) targets.Request {
	raw, ok := spec.(string)
	if !ok {
		b, err := json.Marshal(spec)
		if err != nil {
			panic(err)
		}
		raw = string(b)
	}
	return targets.Request{
		Key: "ops/rotate/inv-3", JobID: "ops/rotate", Invocation: "inv-3",
		Occurrence: occurrence, Attempt: 1, Spec: json.RawMessage(raw),
	}
}

func shell(script string) command.Spec {
	return command.Spec{Argv: []string{script}, Shell: true}
}

func TestLaunchExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexit 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		spec        command.Spec
		want        targets.Status
		wantMessage string
	}{
		{"exit status 0 succeeds", command.Spec{Argv: []string{"true"}}, targets.Succeeded, "command: exit status 0"},
		{"a non-zero exit status fails with it", command.Spec{Argv: []string{"/bin/sh", "-c", "exit 3"}}, targets.Failed, "command: exit status 3"},
		{"a shell script's exit status", shell("exit 7"), targets.Failed, "command: exit status 7"},
		{"a signal fails naming it", shell("kill -KILL $$"), targets.Failed, "command: signal: killed"},
		{"argv is not split by a shell", command.Spec{Argv: []string{"/bin/sh", "-c", "test \"$1\" = 'a b;c'", "sh", "a b;c"}}, targets.Succeeded, "exit status 0"},
		{"a program found by absolute path", command.Spec{Argv: []string{prog}}, targets.Failed, "exit status 4"},
		{"a program found relative to dir", command.Spec{Argv: []string{"./prog"}, Dir: dir}, targets.Failed, "exit status 4"},
		{"a program found in the spec's PATH", command.Spec{Argv: []string{"prog"}, Env: map[string]string{"PATH": dir}}, targets.Failed, "exit status 4"},
		{"a program not in PATH fails before starting", command.Spec{Argv: []string{"no-such-program-sundial"}}, targets.Failed, `"no-such-program-sundial" not found in PATH`},
		{"a missing dir fails before starting", command.Spec{Argv: []string{"true"}, Dir: filepath.Join(dir, "missing")}, targets.Failed, "command: starting true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := newTarget(t, command.Options{}).Launch(t.Context(), request(tc.spec))
			if res.Status != tc.want || !strings.Contains(res.Message, tc.wantMessage) {
				t.Errorf("Launch = %v %q; want %v with %q", res.Status, res.Message, tc.want, tc.wantMessage)
			}
		})
	}
}

// The program gets the base environment, the SUNDIAL_* variables and the
// spec's env, and nothing else of the server's; and it runs in dir.
func TestLaunchAppliesEnvAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := command.Spec{
		Argv: []string{"/bin/sh", "-c", "pwd; /usr/bin/env"},
		Dir:  dir,
		Env:  map[string]string{"LANG": "C", "RETENTION": "7 days", "PATH": "/usr/bin:/bin"},
	}
	res := newTarget(t, command.Options{}).Launch(t.Context(), request(spec))
	if res.Status != targets.Succeeded {
		t.Fatalf("Launch = %v %q\n%s", res.Status, res.Message, res.Log)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Log)), "\n")
	if lines[0] != dir {
		t.Errorf("pwd = %q; want %q", lines[0], dir)
	}
	want := map[string]string{
		"LANG": "C", "RETENTION": "7 days", "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh",
		"SUNDIAL_INVOCATION_ID":  "ops/rotate/inv-3",
		"SUNDIAL_JOB_ID":         "ops/rotate",
		"SUNDIAL_SCHEDULED_TIME": "2026-03-08T07:30:00Z",
		"SUNDIAL_ATTEMPT":        "1",
		"PWD":                    dir, // set by the shell
	}
	if u, err := user.Current(); err == nil {
		want["HOME"], want["USER"], want["LOGNAME"] = u.HomeDir, u.Username, u.Username
	}
	checkEnv(t, lines[1:], want)
}

// The base environment is the same whatever the server's own: HOME, USER
// and LOGNAME are the user database's, LANG is C.UTF-8, and nothing the
// server inherited (a secret, a proxy) reaches the program. Before, HOME,
// USER, LOGNAME and LANG were copied from the server's environment.
func TestLaunchEnvironmentIsNotTheServers(t *testing.T) {
	// Not parallel: it sets the server's environment.
	t.Setenv("HOME", "/server/home")
	t.Setenv("USER", "server-user")
	t.Setenv("LOGNAME", "server-user")
	t.Setenv("LANG", "fr_FR.UTF-8")
	t.Setenv("SUNDIAL_TEST_SECRET", "hunter2")
	t.Setenv("HTTPS_PROXY", "http://proxy.internal:3128")
	res := newTarget(t, command.Options{}).Launch(t.Context(), request(command.Spec{Argv: []string{"/usr/bin/env"}}))
	if res.Status != targets.Succeeded {
		t.Fatalf("Launch = %v %q\n%s", res.Status, res.Message, res.Log)
	}
	want := map[string]string{
		"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SHELL": "/bin/sh", "LANG": "C.UTF-8",
		"SUNDIAL_INVOCATION_ID":  "ops/rotate/inv-3",
		"SUNDIAL_JOB_ID":         "ops/rotate",
		"SUNDIAL_SCHEDULED_TIME": "2026-03-08T07:30:00Z",
		"SUNDIAL_ATTEMPT":        "1",
	}
	if u, err := user.Current(); err == nil {
		want["HOME"], want["USER"], want["LOGNAME"] = u.HomeDir, u.Username, u.Username
	}
	checkEnv(t, strings.Split(strings.TrimSpace(string(res.Log)), "\n"), want)
}

// checkEnv compares the NAME=value lines of env's output with want.
func checkEnv(t *testing.T, lines []string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q; want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s=%s is in the program's environment; want only %v", k, got[k], slices.Sorted(maps.Keys(want)))
		}
	}
}

// A job of a project the operator did not name runs nothing, however its
// definition reached the target (one stored before the list changed):
// Launch refuses it before starting anything, and Allows says why, for
// config validation.
func TestLaunchRunsOnlyTheNamedProjects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		projects []string
		want     string
	}{
		{"another project is named", []string{"ops", "web"}, "the server runs commands only for projects ops, web (--command-projects), not for project billing"},
		{"no project is named", []string{}, "the server runs commands only for projects its operator names (--command-projects), and names none, so not for project billing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tgt := newTarget(t, command.Options{Projects: tc.projects})
			marker := filepath.Join(t.TempDir(), "ran")
			req := request(command.Spec{Argv: []string{"touch", marker}})
			req.Key, req.JobID = "billing/rotate/inv-3", "billing/rotate"
			res := tgt.Launch(t.Context(), req)
			if res.Status != targets.Failed || res.Message != "command: not started: "+tc.want {
				t.Errorf("Launch = %v %q; want Failed: not started: %s", res.Status, res.Message, tc.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the command ran for project billing")
			}
			if err := tgt.Allows("billing"); err == nil || err.Error() != "command: "+tc.want {
				t.Errorf("Allows(billing) = %v; want %q", err, "command: "+tc.want)
			}
		})
	}
	if err := newTarget(t, command.Options{Projects: []string{"ops"}}).Allows("ops"); err != nil {
		t.Errorf("Allows(ops) of a target for ops = %v; want nil", err)
	}
}

func TestLaunchCapturesOutputBounded(t *testing.T) {
	t.Parallel()
	var full strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintln(&full, i)
	}
	for _, tc := range []struct {
		name     string
		script   string
		limit    int
		wantLog  string
		wantDrop int
	}{
		{"stdout and stderr both", "echo out; echo err >&2; echo out again", 1000, "out\nerr\nout again\n", 0},
		{"a long output keeps its head and tail", "seq 1 100000", 1000, "", len(full.String()) - 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := newTarget(t, command.Options{LogLimit: tc.limit}).Launch(t.Context(), request(shell(tc.script)))
			if res.Status != targets.Succeeded {
				t.Fatalf("Launch = %v %q", res.Status, res.Message)
			}
			want := tc.wantLog
			if tc.wantDrop > 0 {
				want = fmt.Sprintf("%s\n[... %d bytes of output dropped ...]\n%s", full.String()[:500], tc.wantDrop, full.String()[full.Len()-500:])
			}
			if string(res.Log) != want {
				t.Errorf("Log = %q; want %q", res.Log, want)
			}
		})
	}
}

// readyFifo makes a named pipe a script writes to once it has started what
// the test is about, and returns its path and a wait for that write.
func readyFifo(t *testing.T, dir string) (string, func()) {
	t.Helper()
	fifo := filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo, func() {
		t.Helper()
		// Opening for reading blocks until the script opens it to write.
		if _, err := os.ReadFile(fifo); err != nil {
			t.Fatal(err)
		}
	}
}

// pidfd opens a pid file descriptor for the process whose pid is in
// pidFile: it becomes readable when the process ends, which is a signal to
// wait on. Killing is asynchronous (a process closes its files, so the
// output pipe can reach EOF, a moment before it is a zombie), so the test
// waits for that signal instead of sampling the state once.
func pidfd(t *testing.T, pidFile string) int {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// pidfd_open(2): 434 on every Linux architecture; the syscall package
	// does not name it.
	fd, _, errno := syscall.Syscall(434, uintptr(pid), 0, 0)
	if errno != 0 {
		t.Fatalf("pidfd_open(%d): %v", pid, errno)
	}
	t.Cleanup(func() { syscall.Close(int(fd)) })
	return int(fd)
}

// ends reports whether the process behind fd ends within a bound that is
// generous for a killed process and far below the child's sleep of 1000 s,
// so a surviving child fails the test instead of hanging it.
func ends(t *testing.T, fd int) bool {
	t.Helper()
	var set syscall.FdSet
	set.Bits[fd/64] |= 1 << (uint(fd) % 64)
	tv := syscall.Timeval{Sec: 20}
	for {
		n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
}

// A timeout, an abort or the program's own exit ends the whole process
// tree: a shell's background child does not survive it, even when it
// ignores SIGTERM.
func TestLaunchEndsTheProcessTree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		script      string // writes its child's pid to $1, then to the fifo $2
		end         func(cancel context.CancelCauseFunc, tgt *command.Target, req targets.Request) error
		want        targets.Status
		wantMessage string
	}{
		{"a timeout stops a shell and its sleeping child", `sleep 1000 & echo $! > "$1"; echo > "$2"; wait`,
			func(cancel context.CancelCauseFunc, _ *command.Target, _ targets.Request) error {
				cancel(context.DeadlineExceeded)
				return nil
			}, targets.Failed, "command: stopped (context deadline exceeded): signal: terminated"},
		{"a child that ignores SIGTERM is killed after the grace period", `trap '' TERM; sleep 1000 & echo $! > "$1"; echo > "$2"; wait`,
			func(cancel context.CancelCauseFunc, _ *command.Target, _ targets.Request) error {
				cancel(context.DeadlineExceeded)
				return nil
			}, targets.Failed, "command: stopped (context deadline exceeded): signal: killed"},
		{"an abort stops the tree", `sleep 1000 & echo $! > "$1"; echo > "$2"; wait`,
			func(_ context.CancelCauseFunc, tgt *command.Target, req targets.Request) error {
				return tgt.Abort(context.Background(), req)
			}, targets.Failed, "command: stopped (aborted): signal: terminated"},
		{"a child left behind by a program that exits is stopped", `sleep 1000 & echo $! > "$1"; echo > "$2"`,
			func(context.CancelCauseFunc, *command.Target, targets.Request) error { return nil },
			targets.Succeeded, "command: exit status 0"},
		{"a child that closed its output is stopped too", `sleep 1000 >/dev/null 2>&1 & echo $! > "$1"; echo > "$2"`,
			func(context.CancelCauseFunc, *command.Target, targets.Request) error { return nil },
			targets.Succeeded, "command: exit status 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			fifo, started := readyFifo(t, dir)
			tgt := newTarget(t, command.Options{Grace: 100 * time.Millisecond})
			req := request(command.Spec{Argv: []string{"/bin/sh", "-c", tc.script, "sh", pidFile, fifo}})
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			done := make(chan targets.Result)
			go func() { done <- tgt.Launch(ctx, req) }()
			started()
			child := pidfd(t, pidFile)
			if err := tc.end(cancel, tgt, req); err != nil {
				t.Fatalf("ending the attempt: %v", err)
			}
			res := <-done
			if res.Status != tc.want || res.Message != tc.wantMessage {
				t.Errorf("Launch = %v %q; want %v %q", res.Status, res.Message, tc.want, tc.wantMessage)
			}
			if !ends(t, child) {
				t.Errorf("the child is still running after Launch returned")
			}
		})
	}
}

// The same script allocates 48 MiB in the shell (a string of x's); under
// max_memory_mb 16 the kernel refuses the allocation (RLIMIT_AS) or kills
// the attempt (memory.max) and the attempt fails, while without a limit,
// or under a generous one, it succeeds. So the limit, not the script, is
// what fails it: with the target's cgroups, and without them.
func TestLaunchMaxMemory(t *testing.T) {
	t.Parallel()
	const greedy = `x=$(head -c 50331648 /dev/zero | tr '\0' x); echo ${#x}`
	for _, cgroup := range []string{"", "none"} {
		for _, tc := range []struct {
			name        string
			spec        command.Spec
			want        targets.Status
			wantMessage string
		}{
			{"no limit lets it allocate", command.Spec{Argv: []string{greedy}, Shell: true}, targets.Succeeded, "exit status 0"},
			{"a generous limit lets it allocate", command.Spec{Argv: []string{greedy}, Shell: true, MaxMemoryMB: 512}, targets.Succeeded, "exit status 0"},
			{"a tight limit fails it", command.Spec{Argv: []string{greedy}, Shell: true, MaxMemoryMB: 16}, targets.Failed, "max_memory_mb 16"},
			{"a tight limit applies to argv without a shell", command.Spec{Argv: []string{"/bin/sh", "-c", greedy}, MaxMemoryMB: 16}, targets.Failed, "max_memory_mb 16"},
		} {
			t.Run(fmt.Sprintf("cgroup %q: %s", cgroup, tc.name), func(t *testing.T) {
				t.Parallel()
				// LANG=C: a locale archive mapped by tr would count against
				// the address space.
				tc.spec.Env = map[string]string{"LANG": "C"}
				res := newTarget(t, command.Options{Cgroup: cgroup}).Launch(t.Context(), request(tc.spec))
				if res.Status != tc.want || !strings.Contains(res.Message, tc.wantMessage) {
					t.Errorf("Launch = %v %q; want %v with %q\n%s", res.Status, res.Message, tc.want, tc.wantMessage, res.Log)
				}
				if tc.want == targets.Succeeded && strings.TrimSpace(string(res.Log)) != "50331648" {
					t.Errorf("Log = %q; want the string's length", res.Log)
				}
			})
		}
	}
}

// One attempt per key runs at a time: a second launch under the key of a
// running attempt starts nothing, so an abort by key stops the one attempt.
func TestLaunchRefusesAKeyThatIsRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo, started := readyFifo(t, dir)
	// SIGTERM ends the shell and its sleep at once, so the abort's message
	// below says "terminated"; with a grace of 100ms a loaded machine
	// reached SIGKILL first, and it said "killed".
	tgt := newTarget(t, command.Options{Grace: time.Minute})
	req := request(command.Spec{Argv: []string{"/bin/sh", "-c", `echo > "$1"; sleep 1000`, "sh", fifo}})
	done := make(chan targets.Result)
	go func() { done <- tgt.Launch(t.Context(), req) }()
	started()
	second := request(shell("echo should not run"))
	if res := tgt.Launch(t.Context(), second); res.Status != targets.Failed || !strings.Contains(res.Message, "not started: attempt 1 of ops/rotate/inv-3 is already running here") || len(res.Log) != 0 {
		t.Errorf("the second Launch = %v %q %q; want Failed, not started", res.Status, res.Message, res.Log)
	}
	if err := tgt.Abort(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.Message != "command: stopped (aborted): signal: terminated" {
		t.Errorf("the first Launch = %v %q; want it aborted", res.Status, res.Message)
	}
}

// newTarget is command.New, failing the test on its error. It runs the
// jobs of the projects these tests use unless opts names others.
func newTarget(t *testing.T, opts command.Options) *command.Target {
	t.Helper()
	if opts.Projects == nil {
		opts.Projects = []string{"ops", "p"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	tgt, err := command.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tgt
}
