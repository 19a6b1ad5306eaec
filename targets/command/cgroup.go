package command

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroup2Magic is CGROUP2_SUPER_MAGIC, what statfs says of a directory of
// the cgroup v2 hierarchy.
const cgroup2Magic = 0x63677270

// cgroups is the parent cgroup (v2) under which each attempt gets a cgroup
// of its own, and what the kernel lets a child of it be bounded by.
type cgroups struct {
	dir string
	// memory and pids say whether the controllers are enabled for the
	// parent's children, so that memory.max and pids.max exist in them.
	memory, pids bool
}

// cgroupSeq numbers the attempts' cgroups of this process, which may have
// several targets over one parent.
var cgroupSeq atomic.Uint64

// openCgroups makes dir, if it is not there, and checks it is a cgroup v2
// directory whose children can be killed whole (cgroup.kill, Linux 5.14);
// it enables the memory and pids controllers for the children where the
// kernel allows: in dir's parent, which succeeds when the parent holds no
// processes of its own (the root cgroup, or a delegated subtree whose
// processes are in a leaf), and in dir. With auto, dir is the server's own
// cgroup's child sundial-commands.
func openCgroups(dir string, auto bool) (*cgroups, error) {
	if auto {
		own, err := ownCgroup()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(own, "sundial-commands")
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("cgroup %q: want an absolute path", dir)
	}
	for _, c := range []string{"+memory", "+pids"} {
		// Refused (EBUSY, ENOENT, EACCES) where the parent holds
		// processes or lacks the controller: the check below says what
		// is missing.
		os.WriteFile(filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"), []byte(c), 0)
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if fs.Type != cgroup2Magic {
		return nil, fmt.Errorf("cgroup %s: not a directory of the cgroup v2 hierarchy", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		return nil, fmt.Errorf("cgroup %s: no cgroup.kill (Linux 5.14 or later has it): %w", dir, err)
	}
	available, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	for _, c := range []string{"memory", "pids"} {
		if slices.Contains(strings.Fields(string(available)), c) {
			os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+c), 0)
		}
	}
	enabled, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	cg := &cgroups{dir: dir}
	for _, c := range strings.Fields(string(enabled)) {
		cg.memory = cg.memory || c == "memory"
		cg.pids = cg.pids || c == "pids"
	}
	cg.endOrphans()
	// A child made and removed now says the server may make them, so a
	// lack of permission is said at start, not at each launch.
	probe, err := cg.make(0, 0)
	if err != nil {
		return nil, err
	}
	probe.f.Close()
	if err := probe.remove(); err != nil {
		return nil, err
	}
	return cg, nil
}

// endOrphans ends the attempts of servers that died (kill -9, a crash)
// before they could end them: their cgroups are named after a pid that no
// longer runs. The engine has settled those attempts as failed; their
// processes must not run on beside the next ones.
func (c *cgroups) endOrphans() {
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		server, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(server)
		if !ok || err != nil || !e.IsDir() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		orphan := &cgroup{dir: filepath.Join(c.dir, e.Name())}
		orphan.kill()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		orphan.waitEmpty(ctx)
		cancel()
		orphan.remove()
	}
}

// ownCgroup is the directory of the server's own cgroup in the cgroup v2
// hierarchy: where it is mounted (/sys/fs/cgroup on a unified host,
// /sys/fs/cgroup/unified on a hybrid one) joined with the "0::" line of
// /proc/self/cgroup.
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	var own string
	found := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own, found = p, true
		}
	}
	if !found {
		return "", errors.New("cgroup: the server is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	defer mi.Close()
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f := strings.Fields(pre)
		if !ok || len(f) < 5 || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		root, mount := unescapeMount(f[3]), unescapeMount(f[4])
		// In a cgroup namespace, or a mount of a subtree, the mount's
		// root is a prefix of the server's cgroup.
		rel, ok := strings.CutPrefix(own, strings.TrimSuffix(root, "/"))
		if !ok {
			continue
		}
		return filepath.Join(mount, rel), nil
	}
	return "", errors.New("cgroup: no cgroup v2 hierarchy is mounted where the server's cgroup is")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroup is one attempt's cgroup.
type cgroup struct {
	dir string
	// f is the open directory, for clone3 to start the program in, so
	// nothing of it runs outside the cgroup.
	f *os.File
}

// make makes a child cgroup bounded by memMB MiB of memory (0: no bound)
// and procs processes and threads (0: no bound), where the controllers are
// enabled. Its name is the server's pid and a sequence number, unique among
// the servers on a machine.
func (c *cgroups) make(memMB, procs int) (*cgroup, error) {
	dir := filepath.Join(c.dir, fmt.Sprintf("%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	cg := &cgroup{dir: dir}
	var limits []string
	if c.memory && memMB > 0 {
		limits = append(limits, "memory.max", strconv.FormatInt(int64(memMB)<<20, 10),
			// The attempt's pages may not go to swap instead, and an OOM
			// kill ends the whole attempt rather than one process of it.
			"memory.swap.max", "0", "memory.oom.group", "1")
	}
	if c.pids && procs > 0 {
		limits = append(limits, "pids.max", strconv.Itoa(procs))
	}
	for i := 0; i < len(limits); i += 2 {
		err := os.WriteFile(filepath.Join(dir, limits[i]), []byte(limits[i+1]), 0)
		if err != nil && !(limits[i] == "memory.swap.max" && errors.Is(err, os.ErrNotExist)) {
			cg.remove()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		cg.remove()
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	cg.f = f
	return cg, nil
}

// signal sends sig to every process in the cgroup, whatever its process
// group or session, and returns how many there were.
func (cg *cgroup) signal(sig syscall.Signal) int {
	b, _ := os.ReadFile(filepath.Join(cg.dir, "cgroup.procs"))
	n := 0
	for f := range strings.FieldsSeq(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

// kill sends SIGKILL to every process in the cgroup at once, in the
// kernel, so one that forks meanwhile cannot slip out.
func (cg *cgroup) kill() error {
	return os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0)
}

// empty reports whether no process is left in the cgroup.
func (cg *cgroup) empty() bool {
	return cg.count("cgroup.events", "populated") == 0
}

// waitEmpty waits until the cgroup is empty or ctx ends, and reports
// whether it is. cgroup.events is polled: a few reads at most for processes
// that exit when told to.
func (cg *cgroup) waitEmpty(ctx context.Context) bool {
	for d := time.Millisecond; !cg.empty(); d = min(2*d, 50*time.Millisecond) {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return cg.empty()
		case <-t.C:
		}
	}
	return true
}

// remove removes the (empty) cgroup, and the cgroups a program made in
// it, deepest first.
func (cg *cgroup) remove() error {
	return rmdirCgroup(cg.dir)
}

// removeIfAny removes cg if there is one, on a path where the attempt has
// failed already for another reason.
func (cg *cgroup) removeIfAny() {
	if cg != nil {
		cg.remove()
	}
}

func rmdirCgroup(dir string) error {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			rmdirCgroup(filepath.Join(dir, e.Name()))
		}
	}
	if err := syscall.Rmdir(dir); err != nil {
		return fmt.Errorf("cgroup: removing %s: %w", dir, err)
	}
	return nil
}

// count reads a "key value" line of one of the cgroup's flat-keyed files
// (cgroup.events, memory.events, pids.events); -1 if it has none.
func (cg *cgroup) count(file, key string) int64 {
	b, err := os.ReadFile(filepath.Join(cg.dir, file))
	if err != nil {
		return -1
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if k, v, ok := bytes.Cut(line, []byte(" ")); ok && string(k) == key {
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}
