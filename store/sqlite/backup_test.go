package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// TestBackupIsAConsistentCopyWhileWritesGoOn: a backup taken while
// Updates commit one after the other holds exactly the first k of them,
// for some k: a snapshot, never a torn mix. It opens as a store.
func TestBackupIsAConsistentCopyWhileWritesGoOn(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	s := openAt(t, path, Options{}, testHooks{})
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	write := func(i int) error {
		_, err := s.Update(context.Background(), "p/j", func(tx store.Tx) error {
			if err := tx.PutJob(&store.JobRecord{ID: "p/j", Project: "p", State: "SCHEDULED", EncodedState: []byte(fmt.Sprint(i))}); err != nil {
				return err
			}
			return tx.PutInvocation(&store.InvocationRecord{JobID: "p/j", ID: fmt.Sprintf("i%05d", i), Occurrence: at.Add(time.Duration(i) * time.Second), Status: "SUCCEEDED"})
		})
		return err
	}
	for i := range 200 {
		if err := write(i); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 200; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := write(i); err != nil {
				t.Error(err)
				return
			}
		}
	})
	dest := filepath.Join(t.TempDir(), "backup.db")
	err := Backup(t.Context(), path, dest, at)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	b := openAt(t, dest, Options{}, testHooks{})
	j, err := b.Job(t.Context(), "p/j")
	if err != nil {
		t.Fatal(err)
	}
	var last int
	fmt.Sscan(string(j.EncodedState), &last)
	invs, _, err := b.Invocations(t.Context(), "p/j", store.Page{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	// The newest page: ids last, last-1, ... with no gap.
	for k, inv := range invs {
		if want := fmt.Sprintf("i%05d", last-k); inv.ID != want {
			t.Fatalf("backup's %d-th newest invocation is %s, want %s (job at %d): not one snapshot", k, inv.ID, want, last)
		}
	}
	if last < 199 {
		t.Errorf("backup holds up to %d, want at least the 200 written before it", last)
	}
}

// TestBackupRefusesWhatItWouldDamage: an existing destination is not
// overwritten, and a missing database is not created by backing it up.
func TestBackupRefusesWhatItWouldDamage(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	path := tempPath(t)
	openAt(t, path, Options{}, testHooks{})
	dest := filepath.Join(t.TempDir(), "exists.db")
	if err := os.WriteFile(dest, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Backup(t.Context(), path, dest, at); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("Backup over an existing file: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "keep me" {
		t.Errorf("the existing file now holds %q", b)
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	if err := Backup(t.Context(), missing, filepath.Join(t.TempDir(), "b.db"), at); err == nil {
		t.Error("Backup of a missing database succeeded")
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("Backup created the missing database")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), "*partial*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// TestRestoredKnowsABackupAndItsFirstStart: a backup, once a server
// starts on it, says so, with the first start's time at every later start;
// the database it was taken of, and a missing file, are no backup (and
// the missing file is not created).
func TestRestoredKnowsABackupAndItsFirstStart(t *testing.T) {
	t.Parallel()
	taken := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	first, later := taken.Add(time.Hour), taken.Add(2*time.Hour)
	path := tempPath(t)
	openAt(t, path, Options{}, testHooks{})
	dest := filepath.Join(t.TempDir(), "backup.db")
	missing := filepath.Join(t.TempDir(), "missing.db")
	if err := Backup(t.Context(), path, dest, taken); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		now  time.Time
		want time.Time
	}{
		{path, first, time.Time{}},
		{dest, first, first},
		{dest, later, first},
		{missing, first, time.Time{}},
	} {
		got, err := Restored(t.Context(), tc.path, tc.now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("Restored(%s, %v) = %v, %v; want %v", filepath.Base(tc.path), tc.now, got, err, tc.want)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("Restored created a missing file")
	}
	// The restored backup still opens as a store.
	openAt(t, dest, Options{}, testHooks{})
}
