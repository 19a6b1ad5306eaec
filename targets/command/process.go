package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is a started command: the leader of its own process group and,
// where the host has cgroup v2, of a cgroup of its own, with the output of
// all its processes being read into a capture.
type process struct {
	cmd *exec.Cmd
	cg  *cgroup // nil without cgroups
	out *capture
	r   *os.File
	// pipe is the output pipe's inode, by which the processes that hold
	// it are found in /proc.
	pipe uint64
	// exited is closed when the leader has been reaped.
	exited chan struct{}
	// outDone is closed when every process holding the output pipe has
	// closed it: the sign that the tree has ended, since children inherit
	// the pipe.
	outDone chan struct{}
	// oomKills and forksRefused are what the cgroup's memory.events and
	// pids.events said when it was removed: why an attempt ended that hit
	// its limits.
	oomKills, forksRefused int64
}

// start starts cmd, which must ask for a process group of its own, with
// stdout and stderr on one pipe; in cg, if it is not nil, from its first
// instruction on (clone3's CLONE_INTO_CGROUP). The process owns cg from
// then on: stop removes it, and so does start if it fails.
func start(cmd *exec.Cmd, cg *cgroup, logLimit int) (*process, error) {
	if cg != nil {
		defer cg.f.Close()
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(cg.f.Fd())
	}
	r, w, err := os.Pipe()
	if err != nil {
		cg.removeIfAny()
		return nil, err
	}
	fi, err := r.Stat()
	if err != nil {
		r.Close()
		w.Close()
		cg.removeIfAny()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		cg.removeIfAny()
		return nil, err
	}
	// Only the command's processes may hold the write end, or the pipe
	// would never reach EOF.
	w.Close()
	p := &process{
		cmd: cmd, cg: cg, out: newCapture(logLimit), r: r, pipe: fi.Sys().(*syscall.Stat_t).Ino,
		exited: make(chan struct{}), outDone: make(chan struct{}),
	}
	go func() {
		io.Copy(p.out, r) // capture never fails; a read error ends the copy
		close(p.outDone)
	}()
	go func() {
		cmd.Wait() // the outcome is read from cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

// stop ends whatever is left of the attempt, whether the leader has exited
// or not: SIGTERM to the process group and to every process of the cgroup;
// then, once the leader has exited, the cgroup emptied and the output
// closed, or the grace period has passed, SIGKILL to the group and
// cgroup.kill, so nothing the attempt started outlives it. Without a
// cgroup, the processes that left the group but still hold the output are
// found in /proc and killed too. It returns when the leader has been
// reaped and the output read, with a note if a process of the attempt may
// still run.
func (p *process) stop(grace time.Duration) (note string) {
	defer p.r.Close()
	pgid := p.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// ESRCH: the group is empty already.
	told := syscall.Kill(-pgid, syscall.SIGTERM) == nil
	if p.cg != nil && p.cg.signal(syscall.SIGTERM) > 0 {
		told = true
	}
	if told {
		select {
		case <-p.exited:
		case <-ctx.Done():
		}
		if p.cg != nil {
			p.cg.waitEmpty(ctx)
		}
		select {
		case <-p.outDone:
		case <-ctx.Done():
		}
	}
	// Processes that ignored SIGTERM, or closed their output and linger.
	syscall.Kill(-pgid, syscall.SIGKILL)
	if p.cg != nil {
		p.cg.kill()
	}
	// The leader itself may have moved to another group.
	p.cmd.Process.Kill()
	<-p.exited
	// SIGKILL ends everything still in the group or the cgroup at once, so
	// the output closes at once unless a process that left the group
	// holds it.
	ctx, cancel = context.WithTimeout(context.Background(), grace)
	defer cancel()
	if p.cg != nil {
		if !p.cg.waitEmpty(ctx) {
			return fmt.Sprintf("processes of the attempt's cgroup %s still run after cgroup.kill", p.cg.dir)
		}
		p.oomKills = max(0, p.cg.count("memory.events", "oom_kill"))
		p.forksRefused = max(0, p.cg.count("pids.events", "max"))
		if err := p.cg.remove(); err != nil {
			note = err.Error()
		}
	}
	select {
	case <-p.outDone:
		return note
	case <-ctx.Done():
	}
	// A holder may fork between the scan and the kill; a few scans catch
	// its children, which hold the pipe too.
	killed := map[int]bool{}
	for range 10 {
		if killHolders(p.pipe, killed) == 0 {
			break
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), grace)
	defer cancel()
	select {
	case <-p.outDone:
		return fmt.Sprintf("killed %d processes that had left the attempt's process group and held its output", len(killed))
	case <-ctx.Done():
	}
	return "output still open after SIGKILL: a process left the attempt's process group and may still run"
}

// killHolders sends SIGKILL to every process that has the pipe with inode
// ino open and is not in killed yet, but the server and the children it is
// starting, adds them to killed, and returns how many it added. It is the
// fallback for hosts without cgroup v2, where nothing else finds a process
// that left its process group (setsid); it reads only what the server's
// user may read, which is every process it may kill.
//
// Another attempt's process, between its fork and its exec, holds every
// pipe the server has open: it is the server's child, still running the
// server's program, and is spared. Killing it failed an attempt that had
// nothing to do with this one. (An orphan the server adopted, as PID 1 of
// a container, is its child too, but runs a program of its own.)
func killHolders(ino uint64, killed map[int]bool) int {
	want := "pipe:[" + strconv.FormatUint(ino, 10) + "]"
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self, n := os.Getpid(), 0
	exe, _ := os.Readlink("/proc/self/exe")
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || killed[pid] {
			continue
		}
		fds, err := os.ReadDir("/proc/" + e.Name() + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink("/proc/" + e.Name() + "/fd/" + fd.Name()); err == nil && link == want {
				if !forking(e.Name(), self, exe) && syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed[pid] = true
					n++
				}
				break
			}
		}
	}
	return n
}

// forking reports whether the process pid is a child of the server's,
// self, still running the server's program, exe: one it is starting.
func forking(pid string, self int, exe string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) state ppid ...", where comm may hold spaces and
	// parentheses: the fields start after its last ')'.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 2 || fields[1] != strconv.Itoa(self) {
		return false
	}
	its, err := os.Readlink("/proc/" + pid + "/exe")
	return err == nil && its == exe
}
