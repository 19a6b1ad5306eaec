package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Backup writes a consistent copy of the database at path to dest, while
// servers keep using it: SQLite's VACUUM INTO reads one snapshot (a WAL
// read transaction, which never blocks the committer nor waits for it)
// and writes it compacted. The copy is written under a temporary name
// beside dest, checked, synced and renamed into place, so dest is either
// absent or a whole, intact database. It refuses a dest that exists and a
// path that holds no database (it never creates one).
//
// The copy is marked as a backup taken at taken: a server that starts on
// it once it is restored knows it runs on the past (Restored).
func Backup(ctx context.Context, path, dest string, taken time.Time) (err error) {
	if path == "" || dest == "" {
		return errors.New("sqlite: backup needs the database and the destination")
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("sqlite: backup of %s: %w", path, err)
	case fi.Size() == 0:
		return fmt.Errorf("sqlite: backup of %s: an empty file: %w", path, ErrDamaged)
	}
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("sqlite: backup to %s: the file exists; choose a new name", dest)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	f, err := os.CreateTemp(filepath.Dir(dest), filepath.Base(dest)+".partial-*")
	if err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	tmp := f.Name()
	f.Close()
	// VACUUM INTO wants a file that does not exist or is empty; the
	// temporary one only reserved the name, with the owner-only mode.
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	db, err := sql.Open("sqlite", path+"?"+url.Values{"_pragma": {"busy_timeout(5000)"}}.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return fmt.Errorf("sqlite: backup of %s: %w", path, err)
	}
	if err := markBackup(ctx, tmp, taken); err != nil {
		return err
	}
	if err := checkBackup(ctx, tmp); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	return syncFile(filepath.Dir(dest))
}

// markBackup writes the backup table into a copy: when it was taken, and
// (NULL until then) when a server first started on it.
func markBackup(ctx context.Context, path string, taken time.Time) error {
	n, err := nanos(taken)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE backup (taken INTEGER NOT NULL, first_start INTEGER);
		INSERT INTO backup (taken) VALUES (?)`, n); err != nil {
		return fmt.Errorf("sqlite: marking the backup: %w", err)
	}
	return nil
}

// Restored tells whether the database at path is a restored backup, and
// if so returns when a server first started on it: the first call's now,
// kept in the file, so that every later start (and every other process)
// gets the same answer. It is the engine's statemachine.Config.RestoredAt.
// A database that is not a backup gives the zero time.
func Restored(ctx context.Context, path string, now time.Time) (time.Time, error) {
	n, err := nanos(now)
	if err != nil {
		return time.Time{}, err
	}
	// Opening a missing file would create it, empty, which Open refuses.
	if fi, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return time.Time{}, nil
	}
	db, err := sql.Open("sqlite", path+"?"+url.Values{"_pragma": {"busy_timeout(5000)"}}.Encode())
	if err != nil {
		return time.Time{}, err
	}
	defer db.Close()
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'backup'").Scan(&tables); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	if tables == 0 {
		return time.Time{}, nil
	}
	if _, err := db.ExecContext(ctx, "UPDATE backup SET first_start = ? WHERE first_start IS NULL", n); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: %s: recording the first start after a restore: %w", path, err)
	}
	var first int64
	if err := db.QueryRowContext(ctx, "SELECT first_start FROM backup").Scan(&first); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	return time.Unix(0, first).UTC(), nil
}

// checkBackup runs SQLite's quick_check on a written copy.
func checkBackup(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", path+"?"+url.Values{"_pragma": {"query_only(1)"}}.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		return fmt.Errorf("sqlite: checking the backup: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("sqlite: the backup fails quick_check: %s", res)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sqlite: sync %s: %w", path, err)
	}
	return nil
}
