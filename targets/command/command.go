// Package command is the target that runs a program on the server's
// machine. It runs only the jobs of projects the operator names
// (Options.Projects): a job config can run anything the user it runs as
// can, which, unless the operator sets another user (Options.User), is the
// server's own user, who can read the server's database and signal it.
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
// The program sees a clean environment, nothing of the server's: PATH (the
// usual system directories), SHELL=/bin/sh, LANG=C.UTF-8, and HOME, USER
// and LOGNAME of the user it runs as, from the user database; then
// SUNDIAL_INVOCATION_ID (the idempotency key, the same for every attempt),
// SUNDIAL_JOB_ID, SUNDIAL_SCHEDULED_TIME (RFC 3339, UTC) and
// SUNDIAL_ATTEMPT; then the spec's env.
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
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/targets"
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
	// Projects are the projects whose jobs may run commands; a job of any
	// other project is refused by Check and by Launch. None means none.
	Projects []string
	// AnyProject lets every project's jobs run commands: for checking
	// specs where no server decides (sundial validate), not for a server.
	AnyProject bool
	// User is the Unix user (a name or a uid) commands run as, with its
	// primary group and no supplementary groups; "" means the server's own
	// user. Switching needs a server running as root, which New checks.
	User string
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
	projects map[string]bool
	anyProj  bool
	cred     *syscall.Credential // nil: the server's own user

	mu      sync.Mutex
	running map[string]*attempt // by idempotency key
}

// attempt is a running attempt, as Abort sees it.
type attempt struct {
	abort chan struct{} // closed by Abort
	done  chan struct{} // closed when Launch has stopped the process group
}

// New returns a command target. It looks up the user commands run as, for
// their credentials and their environment, and makes the cgroup (see
// Options.Cgroup).
func New(opts Options) (*Target, error) {
	t := &Target{grace: opts.Grace, logLimit: opts.LogLimit, maxProcs: opts.MaxProcesses, running: map[string]*attempt{}, anyProj: opts.AnyProject, projects: map[string]bool{}}
	for _, p := range opts.Projects {
		t.projects[p] = true
	}
	if t.grace <= 0 {
		t.grace = DefaultGrace
	}
	if t.logLimit <= 0 {
		t.logLimit = DefaultLogLimit
	}
	if t.maxProcs <= 0 {
		t.maxProcs = DefaultMaxProcesses
	}
	t.baseEnv = map[string]string{"PATH": basePath, "SHELL": "/bin/sh", "LANG": "C.UTF-8"}
	u, err := runAs(opts.User)
	if err != nil {
		return nil, err
	}
	if u != nil {
		t.baseEnv["HOME"], t.baseEnv["USER"], t.baseEnv["LOGNAME"] = u.HomeDir, u.Username, u.Username
	}
	if opts.User != "" {
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		// An empty Groups makes the child call setgroups(0): the server's
		// supplementary groups are not the user's.
		t.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	}
	if len(t.projects) == 0 && !t.anyProj {
		// Nothing will run: no cgroup to make, no protection to miss.
		return t, nil
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

// runAs returns the user commands run as: name's entry in the user
// database, or, for "", the server's own user's (nil where it has none, as
// for an arbitrary uid in a container). Only root can run commands as
// another user.
func runAs(name string) (*user.User, error) {
	if name == "" {
		u, err := user.Current()
		if err != nil {
			return nil, nil
		}
		return u, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.ParseUint(name, 10, 32); numErr != nil {
			return nil, fmt.Errorf("command: user %q: %w", name, err)
		}
		if u, err = user.LookupId(name); err != nil {
			return nil, fmt.Errorf("command: user %q: %w", name, err)
		}
	}
	if _, err := strconv.ParseUint(u.Uid, 10, 32); err != nil {
		return nil, fmt.Errorf("command: user %q: uid %q is not a number", name, u.Uid)
	}
	if _, err := strconv.ParseUint(u.Gid, 10, 32); err != nil {
		return nil, fmt.Errorf("command: user %q: gid %q is not a number", name, u.Gid)
	}
	if euid := os.Geteuid(); euid != 0 {
		return nil, fmt.Errorf("command: running commands as user %q needs the server to run as root, to switch to it for each attempt; it runs as uid %d", name, euid)
	}
	return u, nil
}

// Allows returns nil if the target runs the jobs of project, or an error
// saying it does not; config validation asks it for each job, and Launch
// asks it again for a definition stored before the operator's list
// changed.
func (t *Target) Allows(project string) error {
	if why := t.refusal(project); why != "" {
		return errors.New("command: " + why)
	}
	return nil
}

// refusal says why the target does not run project's jobs; "" if it does.
func (t *Target) refusal(project string) string {
	if t.anyProj || t.projects[project] {
		return ""
	}
	names := slices.Sorted(maps.Keys(t.projects))
	if len(names) == 0 {
		return fmt.Sprintf("the server runs commands only for projects its operator names (--command-projects), and names none, so not for project %s", project)
	}
	return fmt.Sprintf("the server runs commands only for projects %s (--command-projects), not for project %s", strings.Join(names, ", "), project)
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

// RunsWithinCall says that the command's exit is the attempt's end
// (targets.Synchronous).
func (*Target) RunsWithinCall() {}

// Launch runs the command and waits for it. Exit status 0 succeeds;
// anything else fails, with the exit status or signal in the message.
func (t *Target) Launch(ctx context.Context, req targets.Request) targets.Result {
	project := jobid.Split(req.JobID).Project
	if why := t.refusal(project); why != "" {
		return failed("not started: %s", why)
	}
	spec, err := parseSpec(req.Spec)
	if err != nil {
		return targets.Result{Status: targets.Failed, Message: err.Error()}
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
	dir := spec.Dir
	if dir == "" && t.cred != nil {
		// The server's working directory is no business of another user.
		dir = "/"
	}
	cmd := &exec.Cmd{
		Path: path, Args: argv, Env: flatten(env), Dir: dir,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: t.cred},
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
	res := targets.Result{Status: targets.Failed, Log: p.out.Bytes()}
	if note != "" {
		res.Log = append(res.Log, "\n["+note+"]\n"...)
	}
	state := p.cmd.ProcessState
	switch {
	case stopped != nil:
		res.Message = fmt.Sprintf("command: stopped (%v): %v", stopped, state)
	case state.Success() && p.oomKills == 0:
		res.Status = targets.Succeeded
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
func (t *Target) Abort(ctx context.Context, req targets.Request) error {
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
func (t *Target) env(spec Spec, req targets.Request) map[string]string {
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
func failed(format string, args ...any) targets.Result {
	return targets.Result{Status: targets.Failed, Message: "command: " + lineBreaks.Replace(fmt.Sprintf(format, args...))}
}

var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)
