package measure

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestParseStatReadsPastTheCommandName: a command name may hold spaces and
// parentheses; the fields after it must still be read.
func TestParseStatReadsPastTheCommandName(t *testing.T) {
	line := "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 1 0 100 1000 10 18446744073709551615"
	st, ok := ParseStat(line)
	if !ok || st.PPID != 17 || st.CPU != 3 || st.ChildCPU != 0.5 {
		t.Errorf("ParseStat = %+v, %v; want ppid 17, cpu 3, childCPU 0.5", st, ok)
	}
	if _, ok := ParseStat(strings.SplitN(line, ")", 2)[0]); ok {
		t.Error("a truncated line parsed")
	}
}

// TestProcTreeFindsTheChildren: PostgreSQL's CPU and memory are its
// children's too, so the tree must hold a single-threaded parent's
// children, as the postmaster's.
func TestProcTreeFindsTheChildren(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 60 & sleep 60 & wait")
	if err := sh.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	defer func() {
		for _, pid := range ProcTree(sh.Process.Pid)[1:] {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = sh.Process.Kill()
		_ = sh.Wait()
	}()
	var tree []int
	for i := 0; i < 1000 && len(tree) < 3; i++ {
		time.Sleep(10 * time.Millisecond)
		tree = ProcTree(sh.Process.Pid)
	}
	if len(tree) != 3 || tree[0] != sh.Process.Pid {
		t.Fatalf("tree of sh %d = %v; want it and its two sleeps", sh.Process.Pid, tree)
	}
	for _, pid := range tree[1:] {
		if st, ok := ReadStat(pid); !ok || st.PPID != sh.Process.Pid {
			t.Errorf("process %d: %+v, %v; want a child of %d", pid, st, ok, sh.Process.Pid)
		}
	}
}
