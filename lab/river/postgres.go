package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// postgres is a private PostgreSQL server on loopback, in a temporary
// directory of its own.
type postgres struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the server process has exited
	err  error         // its exit, once done is closed
	log  *os.File
}

// startPostgres runs initdb into a new temporary directory and starts
// `postgres` from PATH on a free loopback port with durable commits (fsync
// and synchronous_commit on, as a production server has them). PostgreSQL
// refuses to run as root, so as root it runs as the user named runAs.
func startPostgres(ctx context.Context, runAs string) (_ *postgres, err error) {
	bin, err := exec.LookPath("postgres")
	if err != nil {
		return nil, fmt.Errorf("postgres is not on PATH: %w", err)
	}
	initdb := filepath.Join(filepath.Dir(bin), "initdb")
	if _, err := os.Stat(initdb); err != nil {
		if initdb, err = exec.LookPath("initdb"); err != nil {
			return nil, fmt.Errorf("initdb is not beside %s nor on PATH: %w", bin, err)
		}
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup(runAs)
		if err != nil {
			return nil, fmt.Errorf("running as root, PostgreSQL needs another user: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "river-bench-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	logFile, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			logFile.Close()
		}
	}()
	// initdb's own flushes (--no-sync) only make the empty cluster durable,
	// which a benchmark's throw-away cluster does not need; the server
	// itself runs with fsync on.
	init := exec.CommandContext(ctx, initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	init.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := init.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=on",
		"-c", "synchronous_commit=on",
		"-c", "full_page_writes=on",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: cred,
		// Its own process group, so that a Ctrl-C at the terminal reaches
		// the harness, which then stops the server in order; and the
		// server ends too if the harness dies without stopping it.
		Setpgid:   true,
		Pdeathsig: syscall.SIGQUIT,
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	pg := &postgres{dir: dir, port: port, cmd: cmd, done: make(chan struct{}), log: logFile}
	go func() {
		pg.err = cmd.Wait()
		close(pg.done)
	}()
	if err := pg.waitReady(ctx); err != nil {
		pg.stop()
		return nil, err
	}
	return pg, nil
}

// freePort asks the kernel for a loopback port nobody listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// url is the server's connection string.
func (pg *postgres) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.port)
}

// waitReady waits until the server accepts a connection, for at most a
// minute, or until it exits.
func (pg *postgres) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		pool, err := pgxpool.New(ctx, pg.url())
		if err == nil {
			err = pool.Ping(ctx)
			pool.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-pg.done:
			return fmt.Errorf("postgres exited before accepting connections (%v); its log:\n%s", pg.err, pg.logTail())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections: %w; its log:\n%s", err, pg.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail is the end of the server's log, for errors.
func (pg *postgres) logTail() string {
	b, _ := os.ReadFile(pg.log.Name())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// version is the server's version string.
func (pg *postgres) version(ctx context.Context, pool *pgxpool.Pool) string {
	var v string
	if err := pool.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return ""
	}
	return v
}

// stop shuts the server down (a fast shutdown, then SIGKILL if it has not
// exited within 30 s) and removes its directory.
func (pg *postgres) stop() error {
	_ = pg.cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case <-pg.done:
	case <-time.After(30 * time.Second):
		_ = pg.cmd.Process.Kill()
		<-pg.done
		err = errors.New("postgres did not stop within 30 s; killed")
	}
	pg.log.Close()
	if rmErr := os.RemoveAll(pg.dir); rmErr != nil && err == nil {
		err = rmErr
	}
	return err
}

// pid is the postmaster's process id.
func (pg *postgres) pid() int { return pg.cmd.Process.Pid }

// procTree lists the postmaster and its children (the backends and
// background workers), whose CPU and memory are PostgreSQL's.
func procTree(root int) []int {
	pids := []int{root}
	// The postmaster is single-threaded, so its one task's children file
	// names them all, without reading every process's stat.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", root, root)); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return pids
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		if st, ok := readStat(pid); ok && st.ppid == root {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat holds the fields of /proc/PID/stat that the harness reads.
type procStat struct {
	ppid int
	// cpu is user+system time in seconds; childCPU the same of the
	// children it has waited for.
	cpu, childCPU float64
}

// readStat reads /proc/PID/stat (pid 0: this process).
func readStat(pid int) (procStat, bool) {
	name := "/proc/self/stat"
	if pid != 0 {
		name = "/proc/" + strconv.Itoa(pid) + "/stat"
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return procStat{}, false
	}
	return parseStat(string(b))
}

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const clockTick = 100

// parseStat reads the fields after the command name, which may itself
// hold spaces and parentheses: field 4 is ppid, 14-17 utime, stime,
// cutime, cstime.
func parseStat(s string) (procStat, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return procStat{}, false
	}
	var n [5]uint64
	for j, k := range []int{1, 11, 12, 13, 14} {
		v, err := strconv.ParseUint(f[k], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		n[j] = v
	}
	return procStat{
		ppid:     int(n[0]),
		cpu:      float64(n[1]+n[2]) / clockTick,
		childCPU: float64(n[3]+n[4]) / clockTick,
	}, true
}

// treeCPU is the CPU seconds the postmaster and its children have used:
// the living processes' own, and what the postmaster reaped from the ended
// ones.
func treeCPU(root int) float64 {
	var sum float64
	for _, pid := range procTree(root) {
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		sum += st.cpu
		if pid == root {
			sum += st.childCPU
		}
	}
	return sum
}

// treeMemory is the summed resident and proportional set sizes of the
// postmaster and its children, in bytes. RSS counts the shared buffers
// once in every process that touched them; PSS splits shared pages among
// the processes that map them, so its sum counts them once.
func treeMemory(root int) (rss, pss uint64) {
	for _, pid := range procTree(root) {
		rss += procField(pid, "status", "VmRSS:")
		pss += procField(pid, "smaps_rollup", "Pss:")
	}
	return rss, pss
}

// procField reads a "Name:   N kB" line of /proc/PID/file (pid 0: this
// process), in bytes; 0 where it cannot.
func procField(pid int, file, field string) uint64 {
	name := "/proc/self/" + file
	if pid != 0 {
		name = "/proc/" + strconv.Itoa(pid) + "/" + file
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, field)
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
