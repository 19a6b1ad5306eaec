package server

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Run tells systemd the server is ready once its database is open and its
// listener accepts, and that it is stopping at the stop: a Type=notify
// unit (deploy/systemd/sundial.service) waits for the one and reports the
// other.
func TestRunTellsSystemdReadyAndStopping(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)

	s := Defaults(func(string) string { return "" })
	s.DB, s.Configs.Dir, s.Listen = filepath.Join(dir, "sundial.db"), filepath.Join(dir, "configs"), "127.0.0.1:0"
	if err := os.Mkdir(s.Configs.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s, slog.New(slog.DiscardHandler), time.Now) }()

	read := func() string {
		conn.SetReadDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 256)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	if got := read(); got != "READY=1" {
		t.Errorf("the first notice: %q; want READY=1", got)
	}
	stop()
	if got := read(); got != "STOPPING=1" {
		t.Errorf("the notice at the stop: %q; want STOPPING=1", got)
	}
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
