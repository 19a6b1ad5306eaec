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
)

// Backup writes a consistent copy of the database at path to dest, while
// servers keep using it: SQLite's VACUUM INTO reads one snapshot (a WAL
// read transaction, which never blocks the committer nor waits for it)
// and writes it compacted. The copy is written under a temporary name
// beside dest, checked, synced and renamed into place, so dest is either
// absent or a whole, intact database. It refuses a dest that exists and a
// path that holds no database (it never creates one).
func Backup(ctx context.Context, path, dest string) (err error) {
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
