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
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	p, err := Start(ctx, filepath.Join(root, "index.yaml"))
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err := p.healthy(ctx); err != nil {
		t.Fatal(err)
	}
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

// A missing index file is refused before anything starts.
func TestStartRefusesAMissingIndexFile(t *testing.T) {
	_, err := Start(t.Context(), filepath.Join(t.TempDir(), "index.yaml"))
	if err == nil || !strings.Contains(err.Error(), "index file") {
		t.Fatalf("Start with a missing index file: error %v, want one naming the index file", err)
	}
}
