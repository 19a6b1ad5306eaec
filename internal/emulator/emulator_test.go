package emulator

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Start returns an emulator that answers, and Stop leaves no process of
// its group behind and frees its port.
func TestStartStop(t *testing.T) {
	ctx := t.Context()
	// Tests run in their package's directory.
	p, err := Start(ctx, filepath.Join("..", "..", "index.yaml"))
	if err != nil {
		// emulatortest.EnvRequire, which this package cannot import.
		if os.Getenv("SUNDIAL_REQUIRE_EMULATOR") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err := p.healthy(ctx); err != nil {
		t.Fatal(err)
	}
	stopLeavesNothing(t, p)
}

// StartPubSub returns an emulator that accepts connections, and Stop leaves
// no process of its group behind and frees its port.
func TestStartStopPubSub(t *testing.T) {
	p, err := StartPubSub(t.Context())
	if err != nil {
		if os.Getenv("SUNDIAL_REQUIRE_EMULATOR") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	c, err := net.DialTimeout("tcp", p.Host, 10*time.Second)
	if err != nil {
		_ = p.Stop()
		t.Fatalf("the Pub/Sub emulator said it serves and does not accept connections: %v", err)
	}
	c.Close()
	stopLeavesNothing(t, p)
}

// A missing index file is refused before anything starts.
func TestStartRefusesAMissingIndexFile(t *testing.T) {
	_, err := Start(t.Context(), filepath.Join(t.TempDir(), "index.yaml"))
	if err == nil || !strings.Contains(err.Error(), "index file") {
		t.Fatalf("Start with a missing index file: error %v, want one naming the index file", err)
	}
}

// stopLeavesNothing stops p and checks that no process of its group is
// left and its port is free.
func stopLeavesNothing(t *testing.T, p *Process) {
	t.Helper()
	pgid := p.cmd.Process.Pid
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Stop, signalling the emulator's process group: %v, want ESRCH (no process left)", err)
	}
	if c, err := net.DialTimeout("tcp", p.Host, time.Second); err == nil {
		c.Close()
		t.Errorf("after Stop, %s still accepts connections", p.Host)
	}
}
