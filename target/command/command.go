// Package command is the target that runs a program on the server's
// machine. It is only for servers whose operator enables commands: a job
// config can then run anything the server's user can.
//
// Each attempt runs in a process group of its own and, where the host has
// cgroup v2, in a cgroup of its own, so it can be stopped as a tree: when
// the job's timeout passes, the attempt is aborted or the program exits,
// the group and every process of the cgroup get SIGTERM, then, after the
// grace period, SIGKILL and cgroup.kill, which also ends processes that
// left the group (setsid). The cgroup bounds the attempt's memory and
// processes where the memory and pids controllers are enabled for it.
// Without cgroups (or a controller), the target falls back to rlimits and
// says at start, once, which protection is missing. Stdin is /dev/null.
//
// The program sees a small base environment, not the server's: PATH (the
// usual system directories), SHELL=/bin/sh, and HOME, USER, LOGNAME and
// LANG as the server has them; then SUNDIAL_INVOCATION_ID (the idempotency
// key, the same for every attempt), SUNDIAL_JOB_ID, SUNDIAL_SCHEDULED_TIME
// (RFC 3339, UTC) and SUNDIAL_ATTEMPT; then the spec's env.
package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sundial-cron/sundial/target"
)

// DefaultGrace is how long stopped processes have between SIGTERM and
// SIGKILL when Options does not say.
const DefaultGrace = 10 * time.Second

// DefaultMaxProcesses is the max_processes of a spec that does not say,
// when Options does not say either: room for a build or a pipeline of
// threaded programs, far below what starves a machine of pids.
const DefaultMaxProcesses = 1024

// DefaultLogLimit is how many bytes of output are kept when Options does
// not say: the first half and the last half.
const DefaultLogLimit = 64 << 10

// basePath is PATH for programs, cron's choice plus the sbin directories
// that system jobs (logrotate, ...) live in.
const basePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Options configure a Target.
type Options struct {
	// Grace is how long an attempt's processes have to exit after SIGTERM
	// before they get SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// LogLimit is how many bytes of stdout and stderr (interleaved) are
	// kept; 0 means DefaultLogLimit.
	LogLimit int
	// Cgroup is the cgroup v2 directory under which each attempt gets a
	// cgroup of its own. "" means a sundial-commands child of the server's
	// own cgroup, where the server can make one, and process groups with
	// rlimits where it cannot; "none" means process groups and rlimits.
	// A directory named here that cannot be used is an error of New.
	Cgroup string
	// MaxProcesses is the max_processes of a spec that does not say; 0
	// means DefaultMaxProcesses.
	MaxProcesses int
	// Logger gets the one warning New gives when a protection is missing;
	// nil means slog.Default().
	Logger *slog.Logger
}

// Isolation says how a Target contains an attempt.
type Isolation struct {
	// Cgroup is the directory under which each attempt gets a cgroup; ""
	// when attempts run in process groups only.
	Cgroup string
	// Memory and Processes say whether the cgroup bounds an attempt's
	// memory (max_memory_mb) and its processes (max_processes).
	Memory, Processes bool
}

// Target is the command target. It is safe for concurrent use.
type Target struct {
	grace    time.Duration
	logLimit int
	maxProcs int
	baseEnv  map[string]string
	cgroups  *cgroups // nil: process groups and rlimits only

	mu      sync.Mutex
	running map[string]*attempt // by idempotency key
}

// attempt is a running attempt, as Abort sees it.
type attempt struct {
	abort chan struct{} // closed by Abort
	done  chan struct{} // closed when Launch has stopped the process group
}

// New returns a command target. The base environment is taken from the
// server's now, and the cgroup is made (see Options.Cgroup).
func New(opts Options) (*Target, error) {
	t := &Target{grace: opts.Grace, logLimit: opts.LogLimit, maxProcs: opts.MaxProcesses, running: map[string]*attempt{}}
	if t.grace <= 0 {
		t.grace = DefaultGrace
	}
	if t.logLimit <= 0 {
		t.logLimit = DefaultLogLimit
	}
	if t.maxProcs <= 0 {
		t.maxProcs = DefaultMaxProcesses
	}
	t.baseEnv = map[string]string{"PATH": basePath, "SHELL": "/bin/sh"}
	for _, name := range []string{"HOME", "USER", "LOGNAME", "LANG"} {
		if v, ok := os.LookupEnv(name); ok {
			t.baseEnv[name] = v
		}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	var why error
	switch opts.Cgroup {
	case "none":
		why = errors.New("cgroups are turned off")
	case "":
		t.cgroups, why = openCgroups("", true)
	default:
		cg, err := openCgroups(opts.Cgroup, false)
		if err != nil {
			return nil, fmt.Errorf("command: %w", err)
		}
		t.cgroups = cg
	}
	if w := t.warning(why); w != "" {
		logger.Warn(w)
	}
	return t, nil
}

// warning says which protection an attempt lacks here, and why; "" when
// it has them all.
func (t *Target) warning(why error) string {
	if t.cgroups == nil {
		return fmt.Sprintf("command: attempts run without a cgroup (%v): a process that leaves its attempt's process group (setsid) and its output outlives the attempt unseen; max_memory_mb caps each process's address space (RLIMIT_AS), not the attempt's memory, and is bypassed by forking or by files in /dev/shm; max_processes is not enforced", why)
	}
	var missing []string
	if !t.cgroups.memory {
		missing = append(missing, "memory (max_memory_mb caps each process's address space (RLIMIT_AS) instead, which forking or files in /dev/shm bypass)")
	}
	if !t.cgroups.pids {
		missing = append(missing, "pids (max_processes is not enforced)")
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("command: attempts run in cgroups under %s, which lacks the controllers %s: enable them for it to bound attempts", t.cgroups.dir, strings.Join(missing, " and "))
}

// Isolation says how the target contains an attempt.
func (t *Target) Isolation() Isolation {
	if t.cgroups == nil {
		return Isolation{}
	}
	return Isolation{Cgroup: t.cgroups.dir, Memory: t.cgroups.memory, Processes: t.cgroups.pids}
}

// Check refuses a spec that Launch could not run, naming the field.
func (t *Target) Check(raw json.RawMessage) error {
	_, err := parseSpec(raw)
	return err
}

// Launch runs the command and waits for it. Exit status 0 succeeds;
// anything else fails, with the exit status or signal in the message.
func (t *Target) Launch(ctx context.Context, req target.Request) target.Result {
	spec, err := parseSpec(req.Spec)
	if err != nil {
		return target.Result{Status: target.Failed, Message: err.Error()}
	}
	env := t.env(spec, req)
	argv := spec.Argv
	if spec.Shell {
		argv = []string{"/bin/sh", "-c", spec.Argv[0]}
	}
	path, err := lookPath(argv[0], env["PATH"], spec.Dir)
	if err != nil {
		return failed("%v", err)
	}
	memoryCgroup := t.cgroups != nil && t.cgroups.memory
	if spec.MaxMemoryMB > 0 && !memoryCgroup {
		// Go cannot set an rlimit between fork and exec, and setting it
		// after the start races the program's first allocations; a shell
		// that sets it on itself and then execs the program is in place
		// before the program's first instruction, and needs nothing but
		// /bin/sh.
		kib := strconv.Itoa(spec.MaxMemoryMB << 10)
		argv = append([]string{"/bin/sh", "-c", `ulimit -v "$1" && shift && exec "$@"`, "sundial-command", kib, path}, argv[1:]...)
		path = "/bin/sh"
	}
	if err := context.Cause(ctx); err != nil {
		return failed("not started: %v", err)
	}

	a := &attempt{abort: make(chan struct{}), done: make(chan struct{})}
	if !t.register(req.Key, a) {
		return failed("not started: attempt %d of %s is already running here", req.Attempt, req.Key)
	}
	defer t.unregister(req.Key, a)

	maxProcs := spec.MaxProcesses
	if maxProcs == 0 {
		maxProcs = t.maxProcs
	}
	var cg *cgroup
	if t.cgroups != nil {
		if cg, err = t.cgroups.make(spec.MaxMemoryMB, maxProcs); err != nil {
			return failed("not started: %v", err)
		}
	}
	cmd := &exec.Cmd{
		Path: path, Args: argv, Env: flatten(env), Dir: spec.Dir,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	logLimit := t.logLimit
	if req.LogLimit > 0 {
		logLimit = min(logLimit, req.LogLimit)
	}
	p, err := start(cmd, cg, logLimit)
	if err != nil {
		return failed("starting %s: %v", argv[0], err)
	}
	var stopped error
	select {
	case <-p.exited:
	case <-ctx.Done():
		stopped = context.Cause(ctx)
	case <-a.abort:
		stopped = errors.New("aborted")
	}
	note := p.stop(t.grace)
	res := target.Result{Status: target.Failed, Log: p.out.Bytes()}
	if note != "" {
		res.Log = append(res.Log, "\n["+note+"]\n"...)
	}
	state := p.cmd.ProcessState
	switch {
	case stopped != nil:
		res.Message = fmt.Sprintf("command: stopped (%v): %v", stopped, state)
	case state.Success() && p.oomKills == 0:
		res.Status = target.Succeeded
		res.Message = "command: " + state.String()
	case spec.MaxMemoryMB > 0 && !memoryCgroup:
		res.Message = fmt.Sprintf("command: %v (under max_memory_mb %d, where a failed allocation may end it so)", state, spec.MaxMemoryMB)
	default:
		res.Message = "command: " + state.String()
	}
	// Why it ended, and what the log leaves out, where the user reads
	// first: the engine may cut the middle of a long log, marker and all.
	var also []string
	if p.oomKills > 0 {
		also = append(also, fmt.Sprintf("%d processes killed for going over max_memory_mb %d", p.oomKills, spec.MaxMemoryMB))
	}
	if p.forksRefused > 0 {
		also = append(also, fmt.Sprintf("%d forks refused at max_processes %d", p.forksRefused, maxProcs))
	}
	if note != "" {
		also = append(also, note)
	}
	if n := p.out.Dropped(); n > 0 {
		also = append(also, fmt.Sprintf("%d bytes of output dropped from the log", n))
	}
	if len(also) > 0 {
		res.Message += " (" + strings.Join(also, "; ") + ")"
	}
	return res
}

// Abort stops the running attempt with req's key, as a timeout would, and
// returns once its processes are gone or ctx ends. An attempt that is not
// running here is not an error: there is nothing to stop.
func (t *Target) Abort(ctx context.Context, req target.Request) error {
	t.mu.Lock()
	a := t.running[req.Key]
	if a != nil {
		select {
		case <-a.abort:
		default:
			close(a.abort)
		}
	}
	t.mu.Unlock()
	if a == nil {
		return nil
	}
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("command: aborting %s: %w", req.Key, context.Cause(ctx))
	}
}

func (t *Target) register(key string, a *attempt) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running[key] != nil {
		return false
	}
	t.running[key] = a
	return true
}

func (t *Target) unregister(key string, a *attempt) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, key)
	close(a.done)
}

// env is the base environment, then the SUNDIAL_* variables, then the
// spec's env.
func (t *Target) env(spec Spec, req target.Request) map[string]string {
	env := maps.Clone(t.baseEnv)
	env["SUNDIAL_INVOCATION_ID"] = req.Key
	env["SUNDIAL_JOB_ID"] = req.JobID
	env["SUNDIAL_SCHEDULED_TIME"] = req.Occurrence.UTC().Format(time.RFC3339)
	env["SUNDIAL_ATTEMPT"] = strconv.Itoa(req.Attempt)
	maps.Copy(env, spec.Env)
	return env
}

func flatten(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// lookPath finds a program the way the command's own environment would:
// in its PATH, not the server's. A name with a slash is used as it is,
// relative to dir.
func lookPath(name, path, dir string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue // a relative PATH entry would depend on dir
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH %s: %w", name, path, fs.ErrNotExist)
}

// failed is a result whose message may quote what the spec says (a
// program's name, a PATH, a directory), where Check allows line breaks; they
// are escaped, so the message stays one line.
func failed(format string, args ...any) target.Result {
	return target.Result{Status: target.Failed, Message: "command: " + lineBreaks.Replace(fmt.Sprintf(format, args...))}
}

var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)
