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
