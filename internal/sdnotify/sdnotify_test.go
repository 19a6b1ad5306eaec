package sdnotify

// The tests set NOTIFY_SOCKET and WATCHDOG_USEC as systemd does, so they
// cannot run in parallel.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// systemd is the receiving end of NOTIFY_SOCKET: a real unixgram socket,
// as the service manager binds.
type systemd struct {
	t    *testing.T
	conn *net.UnixConn
}

func listen(t *testing.T) *systemd {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return &systemd{t: t, conn: conn}
}

// next returns the next message the service sent. The deadline only keeps
// a broken test from hanging.
func (s *systemd) next() string {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 4096)
	n, err := s.conn.Read(buf)
	if err != nil {
		s.t.Fatalf("no message from the service: %v", err)
	}
	return string(buf[:n])
}

func TestReadyAndStoppingReachTheSocket(t *testing.T) {
	sd := listen(t)
	if err := Ready(); err != nil {
		t.Fatal(err)
	}
	if got := sd.next(); got != "READY=1" {
		t.Errorf("Ready sent %q, want READY=1", got)
	}
	if err := Stopping(); err != nil {
		t.Fatal(err)
	}
	if got := sd.next(); got != "STOPPING=1" {
		t.Errorf("Stopping sent %q, want STOPPING=1", got)
	}
}

func TestOutsideSystemdNothingIsSentAndNothingFails(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := Ready(); err != nil {
		t.Errorf("Ready: %v, want nil", err)
	}
	if err := Stopping(); err != nil {
		t.Errorf("Stopping: %v, want nil", err)
	}
}

func TestASocketThatIsGoneIsAnError(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "gone"))
	if err := Ready(); err == nil {
		t.Error("Ready to a socket nobody binds: nil, want an error")
	}
}

// TestTheWatchdogIsPettedOnlyWhileHealthy runs the watchdog with a 20 ms
// interval and a health check that fails on its second call: the
// messages are a pet, the failure in the status and no pet, then a pet
// with the status mended.
func TestTheWatchdogIsPettedOnlyWhileHealthy(t *testing.T) {
	sd := listen(t)
	t.Setenv("WATCHDOG_USEC", "20000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	var deadline bool
	done := make(chan error)
	go func() {
		done <- Watchdog(ctx, slog.New(slog.DiscardHandler), func(check context.Context) error {
			_, deadline = check.Deadline()
			calls++
			if calls == 2 {
				return errors.New("the store did not answer")
			}
			return nil
		})
	}()
	for i, want := range []string{
		"WATCHDOG=1",
		"STATUS=unhealthy, not petting the watchdog: the store did not answer",
		"WATCHDOG=1\nSTATUS=healthy",
	} {
		if got := sd.next(); got != want {
			t.Errorf("message %d: got %q, want %q", i+1, got, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watchdog: %v, want nil once its context ends", err)
	}
	if !deadline {
		t.Error("the health check had no deadline: a hung check must not outlast half the interval")
	}
}

func TestNoWatchdogAskedForReturnsAtOnce(t *testing.T) {
	listen(t)
	for _, c := range []struct {
		name, usec, pid string
		wantErr         bool
	}{
		{name: "no WATCHDOG_USEC"},
		{name: "a watchdog for another process", usec: "20000", pid: strconv.Itoa(os.Getpid() + 1)},
		{name: "a WATCHDOG_USEC that is not a number", usec: "soon", wantErr: true},
	} {
		t.Setenv("WATCHDOG_USEC", c.usec)
		t.Setenv("WATCHDOG_PID", c.pid)
		// Context.Background: were the watchdog to run, it would never
		// return and the test would time out.
		err := Watchdog(context.Background(), slog.New(slog.DiscardHandler), func(context.Context) error {
			t.Errorf("%s: the health check ran", c.name)
			return nil
		})
		if (err != nil) != c.wantErr {
			t.Errorf("%s: Watchdog: %v, want error %v", c.name, err, c.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "WATCHDOG_USEC") {
			t.Errorf("%s: %v, want the error to name WATCHDOG_USEC", c.name, err)
		}
	}
}
