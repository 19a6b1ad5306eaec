// Package pgtest starts a real PostgreSQL server for tests: initdb into a
// temporary directory, `postgres` on a free loopback port, a new database
// per test. With SUNDIAL_TEST_DATABASE_URL set the tests use that server
// instead (each still in a database of its own); with
// SUNDIAL_REQUIRE_POSTGRES=1 a machine without PostgreSQL fails the tests
// instead of skipping them, as CI runs them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a PostgreSQL server the tests may use.
type Server struct {
	// URL connects to its maintenance database as a superuser.
	URL string

	// The rest is set for a server this package started, which tests may
	// stop and start again; nil cmd for one SUNDIAL_TEST_DATABASE_URL names.
	bin, data, dir string
	port           int
	durable        bool
	cred           *syscall.Credential
	mu             sync.Mutex
	cmd            *exec.Cmd
	done           chan struct{}
	log            *os.File
}

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
)

// Shared returns the server of this test process, starting it on first
// use; it lives until the process exits (Pdeathsig stops it then). A
// missing PostgreSQL skips the test, or fails it under
// SUNDIAL_REQUIRE_POSTGRES=1.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() {
		if u := os.Getenv("SUNDIAL_TEST_DATABASE_URL"); u != "" {
			shared = &Server{URL: u}
			return
		}
		shared, sharedErr = Start(false)
	})
	if sharedErr != nil {
		unavailable(t, sharedErr)
	}
	return shared
}

// Own starts a server for this test alone, stopped when it ends: for
// tests that crash or stop the server. SUNDIAL_TEST_DATABASE_URL does not
// apply: a test must not crash a server it does not own.
func Own(t testing.TB) *Server {
	t.Helper()
	s, err := Start(false)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("SUNDIAL_REQUIRE_POSTGRES") == "1" {
		t.Fatalf("PostgreSQL is required (SUNDIAL_REQUIRE_POSTGRES=1): %v", err)
	}
	t.Skipf("no PostgreSQL (set SUNDIAL_TEST_DATABASE_URL, or install it): %v", err)
}

// Database creates a new, empty database on s for this test and returns
// its URL; it is dropped when the test ends.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "sundial_test_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, s.URL)
		if err != nil {
			return // the server is gone: nothing to drop
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// binaries finds postgres and initdb.
func binaries() (postgres, initdb string, err error) {
	if postgres, err = Binary("postgres"); err != nil {
		return "", "", err
	}
	initdb, err = Binary("initdb")
	return postgres, initdb, err
}

// Binary finds one of PostgreSQL's programs (pg_dump, psql, ...): on PATH,
// or where Debian's package puts them (/usr/lib/postgresql/N/bin, the
// newest N), which is not on PATH.
func Binary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		p := filepath.Join(dirs[i], name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is neither on PATH nor in /usr/lib/postgresql/*/bin", name)
}

// Start runs initdb into a new temporary directory and starts the server,
// for a test or the lab's benchmarks; Close stops it. durable runs it as
// production runs PostgreSQL (fsync, synchronous commits, full-page
// writes), for measurements; a test's throw-away cluster skips fsync.
// PostgreSQL refuses to run as root, so as root it runs as the user
// postgres (Debian's package makes it) or else nobody.
func Start(durable bool) (*Server, error) {
	bin, initdb, err := binaries()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			if u, err = user.Lookup("nobody"); err != nil {
				return nil, fmt.Errorf("running as root, PostgreSQL needs another user: %w", err)
			}
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "sundial-pgtest-")
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	init := exec.Command(initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	init.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := init.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{
		URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		bin: bin, data: data, dir: dir, port: port, durable: durable, cred: cred,
	}
	if err := s.run(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// run starts the server process on s's data directory and waits until it
// accepts connections. Unless durable, fsync is off: a test's cluster is
// thrown away, and an immediate stop loses no committed transaction
// without an operating-system crash, which no test makes.
func (s *Server) run() error {
	logFile, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fsync := "off"
	if s.durable {
		fsync = "on"
	}
	cmd := exec.Command(s.bin, "-D", s.data, "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync="+fsync,
		"-c", "synchronous_commit=on",
		"-c", "full_page_writes=on",
		"-c", "max_connections=400",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, and SIGQUIT (an immediate stop) if the test
	// process dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.log = cmd, done, logFile
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL)
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited before accepting connections; its log:\n%s", s.LogTail())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections: %w; its log:\n%s", err, s.LogTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop stops a server this package started: mode "fast" (SIGINT: clients
// are disconnected, a clean shutdown) or "immediate" (SIGQUIT: as a crash,
// recovery at the next start), as pg_ctl stop -m names them.
func (s *Server) Stop(t testing.TB, mode string) {
	t.Helper()
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		t.Fatalf("pgtest: %s is not a server this test started", s.URL)
	}
	sig := syscall.SIGINT
	if mode == "immediate" {
		sig = syscall.SIGQUIT
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	s.log.Close()
}

// Restart starts a stopped server again, on its port and data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.run(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// PID is the postmaster's process id: its children are the server's
// other processes, whose CPU and memory the lab measures.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd.Process.Pid
}

// Close stops a server Start started (a fast shutdown) and removes its
// directory.
func (s *Server) Close() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	s.log.Close()
	return os.RemoveAll(s.dir)
}

// LogTail is the end of the server's log, for a failing test.
func (s *Server) LogTail() string {
	if s.dir == "" {
		return ""
	}
	b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
