package command

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Between its fork and its exec, another attempt's process holds every
// pipe the server has open, this attempt's output among them: killHolders
// spares the server's children, and kills a holder that is not one.
func TestKillHoldersSparesTheServersChildren(t *testing.T) {
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

	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{r}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	// A holder left behind by a shell that has exited, as by a command
	// that ran `setsid ... &`: not the server's child.
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
	if n := killHolders(ino, killed); n != 1 || !killed[orphan] {
		t.Errorf("killHolders killed %d processes, %v; want only the orphan %d", n, killed, orphan)
	}
	if killed[child.Process.Pid] || child.Process.Signal(syscall.Signal(0)) != nil {
		t.Errorf("killHolders killed the server's own child %d", child.Process.Pid)
	}
}
