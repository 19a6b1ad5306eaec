package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// A config directory may come from a repo anyone in a project can push
// to: what is in it must not make the server read without end (/dev/zero),
// block for ever (a FIFO), or show a file it points at (a token, a
// password file). Only regular files are read, and only up to
// MaxFileSize; each refusal says what the entry is, never what it holds.
func TestReadDirReadsOnlyRegularFilesOfBoundedSize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(secret, []byte("s3cret-token-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "good.yaml"), []byte("jobs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"zero.yaml": "/dev/zero", "token.yaml": secret, "inside.yaml": "good.yaml"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Sparse: past the bound without taking the disk.
	if err := os.Truncate(writeEmpty(t, filepath.Join(dir, "huge.yaml")), config.MaxFileSize+1); err != nil {
		t.Fatal(err)
	}

	files, err := config.ReadDir(dir) // a FIFO read would block here for ever
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fifo":   "not a regular file (a FIFO)",
		"good":   "",
		"huge":   "more than the",
		"inside": "a symbolic link",
		"token":  "a symbolic link",
		"zero":   "a symbolic link",
	}
	if len(files) != len(want) {
		t.Fatalf("ReadDir gave %d files, want %d: %+v", len(files), len(want), files)
	}
	for _, f := range files {
		w, ok := want[f.Project]
		switch {
		case !ok:
			t.Errorf("unexpected project %s", f.Project)
		case w == "" && (f.Err != nil || string(f.Data) != "jobs: []\n"):
			t.Errorf("%s: %q, %v; want it read", f.Path, f.Data, f.Err)
		case w != "" && (f.Err == nil || !strings.Contains(f.Err.Error(), w) || !strings.Contains(f.Err.Error(), f.Path) || f.Data != nil):
			t.Errorf("%s: data of %d bytes, error %v; want no data and an error naming the path and %q", f.Path, len(f.Data), f.Err, w)
		}
		if f.Err != nil && strings.Contains(f.Err.Error(), "s3cret") {
			t.Errorf("%s: the error shows what the link points at holds: %v", f.Path, f.Err)
		}
	}
}

// A file at the bound is read whole; the bound is not off by one.
func TestReadFileReadsAFileOfExactlyMaxFileSize(t *testing.T) {
	t.Parallel()
	path := writeEmpty(t, filepath.Join(t.TempDir(), "big.yaml"))
	if err := os.Truncate(path, config.MaxFileSize); err != nil {
		t.Fatal(err)
	}
	data, err := config.ReadFile(path)
	if err != nil || len(data) != config.MaxFileSize {
		t.Errorf("ReadFile of a file of MaxFileSize bytes: %d bytes, %v; want all of it", len(data), err)
	}
}

func writeEmpty(t *testing.T, path string) string {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
