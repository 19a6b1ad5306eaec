package command_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/command"
)

// escape is a script that starts a process which leaves the attempt's
// process group and session (setsid) and writes its pid to $1 and its
// cgroup to $1.cgroup, waits until it has, says so on the fifo $2, and
// then runs $3. The escapee's output is $4, or the attempt's output if $4
// is "-".
const escape = `inner='cat /proc/self/cgroup > "$1.cgroup"; echo $$ > "$1"; exec sleep 1000'
if [ "$4" = - ]; then setsid sh -c "$inner" sh "$1" </dev/null &
else setsid sh -c "$inner" sh "$1" >"$4" 2>&1 </dev/null &
fi
until [ -s "$1" ]; do sleep 0.01; done
echo > "$2"
eval "$3"`

// gone reports whether the process whose pid is in pidFile has ended, or
// ends within the bound of ends: a pid that no longer exists (ESRCH) has.
func gone(t *testing.T, pidFile string) bool {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	fd, _, errno := syscall.Syscall(434, uintptr(pid), 0, 0) // pidfd_open
	if errno == syscall.ESRCH {
		return true
	}
	if errno != 0 {
		t.Fatalf("pidfd_open(%d): %v", pid, errno)
	}
	defer syscall.Close(int(fd))
	return ends(t, int(fd))
}

// cgroupTarget is a target whose attempts run in cgroups, or a skip saying
// why this host gives none.
func cgroupTarget(t *testing.T, opts command.Options) *command.Target {
	t.Helper()
	var warning bytes.Buffer
	opts.Logger = slog.New(slog.NewTextHandler(&warning, nil))
	tgt := newTarget(t, opts)
	if tgt.Isolation().Cgroup == "" {
		t.Skipf("this host gives the server no usable cgroup v2: %s", warning.String())
	}
	return tgt
}

type ending struct {
	name string
	then string // what the script runs once the escapee has started
	end  func(cancel context.CancelCauseFunc, tgt *command.Target, req targets.Request) error
	want targets.Status
}

var endings = []ending{
	{"after the timeout", "exec sleep 1000", func(cancel context.CancelCauseFunc, _ *command.Target, _ targets.Request) error {
		cancel(context.DeadlineExceeded)
		return nil
	}, targets.Failed},
	{"after an abort", "exec sleep 1000", func(_ context.CancelCauseFunc, tgt *command.Target, req targets.Request) error {
		return tgt.Abort(context.Background(), req)
	}, targets.Failed},
	{"after the program exits", "exit 0", func(context.CancelCauseFunc, *command.Target, targets.Request) error { return nil }, targets.Succeeded},
}

// runEscape launches the escape script on tgt, ends it as e says, and
// returns the result and the escapee's pid file.
func runEscape(t *testing.T, tgt *command.Target, e ending, output string) (targets.Result, string) {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "escapee.pid")
	fifo, started := readyFifo(t, dir)
	req := request(command.Spec{Argv: []string{"/bin/sh", "-c", escape, "sh", pidFile, fifo, e.then, output}})
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	done := make(chan targets.Result)
	go func() { done <- tgt.Launch(ctx, req) }()
	started()
	if err := e.end(cancel, tgt, req); err != nil {
		t.Fatalf("ending the attempt: %v", err)
	}
	return <-done, pidFile
}

// A process that left the attempt's process group and session and closed
// its output (setsid ... >/dev/null &) is still in the attempt's cgroup,
// which is killed whole when the attempt ends, however it ends; and the
// cgroup is removed.
func TestLaunchEndsProcessesThatLeftTheGroup(t *testing.T) {
	t.Parallel()
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			tgt := cgroupTarget(t, command.Options{Grace: 100 * time.Millisecond})
			res, pidFile := runEscape(t, tgt, e, "/dev/null")
			if res.Status != e.want {
				t.Errorf("Launch = %v %q; want %v", res.Status, res.Message, e.want)
			}
			if !gone(t, pidFile) {
				t.Errorf("the process that left the group still runs after Launch returned")
			}
			b, err := os.ReadFile(pidFile + ".cgroup")
			if err != nil {
				t.Fatal(err)
			}
			var own string
			for line := range strings.SplitSeq(string(b), "\n") {
				if p, ok := strings.CutPrefix(line, "0::"); ok {
					own = p
				}
			}
			if own == "" || !strings.HasSuffix(filepath.Dir(own), filepath.Base(tgt.Isolation().Cgroup)) {
				t.Fatalf("the escapee's cgroup is %q; want a child of %s", own, tgt.Isolation().Cgroup)
			}
			if _, err := os.Stat(filepath.Join(tgt.Isolation().Cgroup, filepath.Base(own))); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the attempt's cgroup %s is still there (%v); want it removed", filepath.Base(own), err)
			}
		})
	}
}

// Without cgroups, a process that left the group but kept the attempt's
// output is found by the pipe it holds and killed, and the message says
// so.
func TestLaunchWithoutCgroupsKillsHoldersOfTheOutput(t *testing.T) {
	t.Parallel()
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			tgt := newTarget(t, command.Options{Grace: 100 * time.Millisecond, Cgroup: "none"})
			res, pidFile := runEscape(t, tgt, e, "-")
			const note = "killed 1 processes that had left the attempt's process group and held its output"
			if res.Status != e.want || !strings.Contains(res.Message, note) || !strings.Contains(string(res.Log), note) {
				t.Errorf("Launch = %v %q\n%s\nwant %v, the message and the log saying %q", res.Status, res.Message, res.Log, e.want, note)
			}
			if !gone(t, pidFile) {
				t.Errorf("the process that left the group still runs after Launch returned")
			}
		})
	}
}

// Without a cgroup, or without a controller, New says once, at start,
// which protection an attempt lacks.
func TestNewWarnsOfMissingProtection(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	tgt := newTarget(t, command.Options{Cgroup: "none", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if got := tgt.Isolation(); got != (command.Isolation{}) {
		t.Errorf("Isolation() = %+v; want none", got)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") {
		t.Fatalf("New logged %q; want one warning", log.String())
	}
	for _, want := range []string{"without a cgroup (cgroups are turned off)", "outlives the attempt unseen", "RLIMIT_AS", "max_processes is not enforced"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the warning %q does not say %q", lines[0], want)
		}
	}

	log.Reset()
	tgt = newTarget(t, command.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	iso := tgt.Isolation()
	if iso.Cgroup == "" {
		if !strings.Contains(log.String(), "without a cgroup") {
			t.Errorf("no cgroup, and New logged %q; want a warning saying so", log.String())
		}
		return
	}
	for controller, enabled := range map[string]bool{"memory (max_memory_mb": iso.Memory, "pids (max_processes is not enforced)": iso.Processes} {
		if said := strings.Contains(log.String(), controller); said == enabled {
			t.Errorf("Isolation() = %+v, and New logged %q: want the warning to name %s exactly when it is missing", iso, log.String(), controller)
		}
	}
	if iso.Memory && iso.Processes && log.Len() != 0 {
		t.Errorf("New logged %q with every protection in place; want nothing", log.String())
	}
}

// A cgroup the operator names that is not one is an error at start, not a
// silent fallback.
func TestNewRefusesANamedCgroupItCannotUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ cgroup, want string }{
		{dir, "not a directory of the cgroup v2 hierarchy"},
		{"sys/fs/cgroup", "want an absolute path"},
	} {
		if _, err := command.New(command.Options{Cgroup: tc.cgroup, Projects: []string{"ops"}}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(Cgroup: %q) = %v; want an error saying %q", tc.cgroup, err, tc.want)
		}
	}
}

// The message says exactly how many bytes of output the log leaves out,
// where the engine keeps it whole: the engine's own cut of a long log
// drops the target's marker with the middle.
func TestLaunchSaysHowMuchOutputWasDropped(t *testing.T) {
	t.Parallel()
	const size = 64 << 20
	res := newTarget(t, command.Options{}).Launch(t.Context(), request(shell(fmt.Sprintf("head -c %d /dev/zero", size))))
	dropped := size - command.DefaultLogLimit
	want := fmt.Sprintf("command: exit status 0 (%d bytes of output dropped from the log)", dropped)
	if res.Status != targets.Succeeded || res.Message != want {
		t.Errorf("Launch = %v %q; want Succeeded %q", res.Status, res.Message, want)
	}
	if marker := fmt.Sprintf("\n[... %d bytes of output dropped ...]\n", dropped); !bytes.Contains(res.Log, []byte(marker)) {
		t.Errorf("the log has no marker %q", marker)
	}
}

// Under the memory controller, max_memory_mb bounds the attempt as a
// whole: files in /dev/shm and the memory of forked processes count, and
// the message says the kernel killed it for that.
func TestLaunchCgroupMemoryLimit(t *testing.T) {
	t.Parallel()
	f, err := os.CreateTemp("/dev/shm", "sundial-test-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	shm := f.Name()
	t.Cleanup(func() { os.Remove(shm) })
	for _, tc := range []struct{ name, script string }{
		{"a file in /dev/shm", `head -c 67108864 /dev/zero > "$1"`},
		// Each of six processes takes 8 MiB, each under an RLIMIT_AS of
		// 16 MiB; the leader succeeds once all six have.
		{"forked processes", `for i in 1 2 3 4 5 6; do (x=$(head -c 8388608 /dev/zero | tr '\0' x); echo >> "$1"; sleep 1000) & done
until [ "$(wc -l < "$1")" -ge 6 ]; do sleep 0.01; done`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tgt := cgroupTarget(t, command.Options{Grace: 100 * time.Millisecond})
			if !tgt.Isolation().Memory {
				t.Skipf("the cgroup %s has no memory controller: max_memory_mb falls back to RLIMIT_AS (TestLaunchMaxMemory)", tgt.Isolation().Cgroup)
			}
			file := shm
			if tc.name != "a file in /dev/shm" {
				file = filepath.Join(t.TempDir(), "count")
			}
			spec := command.Spec{Argv: []string{"/bin/sh", "-c", tc.script, "sh", file}, MaxMemoryMB: 16, Env: map[string]string{"LANG": "C"}}
			res := tgt.Launch(t.Context(), request(spec))
			if res.Status != targets.Failed || !strings.Contains(res.Message, "killed for going over max_memory_mb 16") {
				t.Errorf("Launch = %v %q; want Failed, killed for going over max_memory_mb 16", res.Status, res.Message)
			}
		})
	}
}

// Under the pids controller, max_processes bounds the processes an
// attempt has at once, and the message says forks were refused.
func TestLaunchCgroupProcessLimit(t *testing.T) {
	t.Parallel()
	tgt := cgroupTarget(t, command.Options{Grace: 100 * time.Millisecond})
	if !tgt.Isolation().Processes {
		t.Skipf("the cgroup %s has no pids controller: max_processes is not enforced here", tgt.Isolation().Cgroup)
	}
	spec := command.Spec{Argv: []string{`for i in $(seq 20); do sleep 1000 & done`}, Shell: true, MaxProcesses: 8}
	res := tgt.Launch(t.Context(), request(spec))
	if !strings.Contains(res.Message, "forks refused at max_processes 8") {
		t.Errorf("Launch = %v %q; want forks refused at max_processes 8", res.Status, res.Message)
	}
}

// A server killed with its attempts running leaves their cgroups, named
// after its pid; the next server's New ends them and removes the cgroups.
func TestNewEndsAttemptsOfADeadServer(t *testing.T) {
	t.Parallel()
	parent := cgroupTarget(t, command.Options{}).Isolation().Cgroup
	// The pid of a process that has ended stands for the dead server's.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, fmt.Sprintf("%d-1", dead.Process.Pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	orphan := exec.Command("sleep", "1000")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: int(f.Fd())}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	waited := make(chan struct{})
	go func() {
		waitErr = orphan.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		orphan.Process.Kill()
		<-waited
		syscall.Rmdir(dir)
	})

	newTarget(t, command.Options{})
	select {
	case <-waited:
		if !strings.Contains(fmt.Sprint(waitErr), "killed") {
			t.Errorf("the orphan ended with %v; want killed", waitErr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the orphan still runs after New")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead server's cgroup %s is still there (%v); want it removed", dir, err)
	}
}
