package command

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child of the test that runs the test's own program, as a process the
// server is starting does between its fork and its exec: it sleeps.
func TestMain(m *testing.M) {
	if os.Getenv("SUNDIAL_TEST_FORKING") != "" {
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Between its fork and its exec, another attempt's process holds every
// pipe the server has open, this attempt's output among them: killHolders
// spares it, and kills every other holder, the server's adopted orphans
// (as PID 1 of a container) among them.
func TestKillHoldersSparesWhatTheServerIsStarting(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fi, err := r.Stat()
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	start := func(cmd *exec.Cmd) *exec.Cmd {
		t.Helper()
		cmd.ExtraFiles = []*os.File{r}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		return cmd
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	forking := exec.Command(exe)
	forking.Env = append(os.Environ(), "SUNDIAL_TEST_FORKING=1")
	start(forking)
	// A child running a program of its own, as an orphan the server
	// adopted does.
	adopted := start(exec.Command("sleep", "60"))
	// A holder left behind by a shell that has exited, as by a command
	// that ran `setsid ... &`.
	sh := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!")
	sh.ExtraFiles = []*os.File{r}
	out, err := sh.Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the shell printed %q, not a pid", out)
	}
	defer syscall.Kill(orphan, syscall.SIGKILL)

	killed := map[int]bool{}
	if n := killHolders(ino, killed); n != 2 || !killed[orphan] || !killed[adopted.Process.Pid] {
		t.Errorf("killHolders killed %d processes, %v; want the orphan %d and the adopted %d", n, killed, orphan, adopted.Process.Pid)
	}
	if killed[forking.Process.Pid] || forking.Process.Signal(syscall.Signal(0)) != nil {
		t.Errorf("killHolders killed %d, which the server was starting", forking.Process.Pid)
	}
}
