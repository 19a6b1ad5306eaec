package command

import (
	"context"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is a started command: the leader of its own process group, with
// the output of the whole group being read into a capture.
type process struct {
	cmd *exec.Cmd
	out *capture
	r   *os.File
	// exited is closed when the leader has been reaped.
	exited chan struct{}
	// outDone is closed when every process holding the output pipe has
	// closed it: the sign that the tree has ended, since children inherit
	// the pipe.
	outDone chan struct{}
}

// start starts cmd, which must ask for a process group of its own, with
// stdout and stderr on one pipe.
func start(cmd *exec.Cmd, logLimit int) (*process, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	// Only the command's processes may hold the write end, or the pipe
	// would never reach EOF.
	w.Close()
	p := &process{cmd: cmd, out: newCapture(logLimit), r: r, exited: make(chan struct{}), outDone: make(chan struct{})}
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

// stop ends whatever is left of the process group, whether the leader has
// exited or not: SIGTERM to the group; then, once the leader has exited and
// the output has closed, or the grace period has passed, SIGKILL to the
// group, so nothing the attempt started outlives it. It returns when the
// leader has been reaped and the output read, with a note if a process that
// left the group still held the output.
func (p *process) stop(grace time.Duration) (note string) {
	defer p.r.Close()
	pgid := p.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// ESRCH: the group is empty already; there is nothing to wait for.
	if syscall.Kill(-pgid, syscall.SIGTERM) == nil {
		select {
		case <-p.exited:
		case <-ctx.Done():
		}
		select {
		case <-p.outDone:
		case <-ctx.Done():
		}
	}
	// Processes that ignored SIGTERM, or closed their output and linger.
	syscall.Kill(-pgid, syscall.SIGKILL)
	// The leader itself may have moved to another group.
	p.cmd.Process.Kill()
	<-p.exited
	// SIGKILL ends everything still in the group at once, so the output
	// closes at once unless a process that left the group holds it.
	ctx, cancel = context.WithTimeout(context.Background(), grace)
	defer cancel()
	select {
	case <-p.outDone:
		return ""
	case <-ctx.Done():
		return "output still open after SIGKILL: a process left the attempt's process group and may still run"
	}
}
