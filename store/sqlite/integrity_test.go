package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sundial-cron/sundial/store"
)

// filledFile returns a closed database file holding n jobs, its WAL
// checkpointed into it.
func filledFile(t *testing.T, n int) string {
	t.Helper()
	path := tempPath(t)
	s, err := Open(path, Options{Synchronous: SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	blob := []byte(strings.Repeat("d", 200))
	for i := range n {
		id := fmt.Sprintf("p/job%05d", i)
		if _, err := s.Update(t.Context(), id, func(tx store.Tx) error {
			return tx.PutJob(&store.JobRecord{ID: id, Project: "p", State: "SCHEDULED", Definition: blob, EncodedState: blob})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the WAL is still there after Close (%v): the pages zeroed below might not be the live ones", err)
	}
	return path
}

// zeroPages overwrites pages [from, to) (1-based, 4096 bytes each) of the
// file with zeros, as a failing disk or a bad copy leaves them.
func zeroPages(t *testing.T, path string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, (to-from)*4096), int64(from-1)*4096); err != nil {
		t.Fatal(err)
	}
}

func refused(t *testing.T, path, want string) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatalf("Open(%s) of a damaged file succeeded", path)
	}
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open(%s) = %v; want ErrDamaged naming the file and %q", path, err, want)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Fatalf("Open(%s) changed the refused file", path)
	}
}

func TestZeroedPagesAreRefusedAtOpen(t *testing.T) {
	t.Parallel()
	path := filledFile(t, 3000)
	zeroPages(t, path, 10, 14)
	refused(t, path, "quick_check")
}

func TestZeroedFirstPageIsRefusedAtOpen(t *testing.T) {
	t.Parallel()
	path := filledFile(t, 100)
	zeroPages(t, path, 1, 2)
	refused(t, path, "not a database")
}

func TestEmptyFileIsRefusedNotStartedAfresh(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	refused(t, path, "0 bytes")
}

func TestMissingFileIsCreatedWhole(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	// Stores opening a new file at once stand for servers started
	// together: none may find the file empty and refuse it.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			s, err := Open(path, Options{Synchronous: SyncNormal})
			if err == nil {
				_, err = s.Update(t.Context(), "p/same", incr)
				err = errors.Join(err, s.Close())
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	s := openAt(t, path, Options{}, testHooks{})
	if n := count(t, s, "p/same"); n != len(errs) {
		t.Fatalf("count = %d, want %d: a Store wrote to another file", n, len(errs))
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".new-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// A new database is readable by the server's user only, with its WAL and
// shared-memory files: it holds every project's definitions, their
// headers included, and a command run as another user must not read them.
func TestNewFileIsPrivate(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	s := openAt(t, path, Options{}, testHooks{})
	if _, err := s.Update(t.Context(), "p/same", incr); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v; want -rw-------", filepath.Base(name), fi.Mode().Perm())
		}
	}
}
