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
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrDamaged is wrapped by the error Open returns for a file that exists
// but does not hold an intact database.
var ErrDamaged = errors.New("not an intact Sundial database")

// prepareFile makes sure path holds a database before the store's
// connections open it. SQLite would take an empty file for a new database,
// so a database truncated to 0 bytes would start again with no jobs and no
// history, as if nothing had happened. Open therefore never leaves an
// empty file at path itself (createFile), and an empty file found there is
// refused: it was made by someone else, or was once a database.
func prepareFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return createFile(path)
	case err != nil:
		return fmt.Errorf("sqlite: %w", err)
	case fi.Size() == 0:
		return fmt.Errorf("sqlite: %s is an empty file (0 bytes): %w; if it held Sundial's database it was truncated: "+
			"restore it from a backup, or remove the file to start with a new, empty database", path, ErrDamaged)
	}
	return nil
}

// createFile creates the database at path with its schema, or leaves path
// alone if another process created it first. The new file is built under
// a temporary name and linked into place whole, so no other process ever
// sees an empty file at path. It is readable by its owner only (as
// os.CreateTemp makes it, and SQLite its WAL and shared-memory files after
// it): it holds every project's definitions, their headers included.
func createFile(path string) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() { err = errors.Join(err, os.Remove(tmp)) }()
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", tmp+"?"+url.Values{"_pragma": {"journal_mode(WAL)"}}.Encode())
	if err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	conn, err := db.Conn(context.Background())
	if err == nil {
		err = migrate(conn)
		err = errors.Join(err, conn.Close())
	}
	// Closing the last connection checkpoints the WAL into the file and
	// removes it, so the file linked below is the whole database.
	if err = errors.Join(err, db.Close()); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	return nil
}

// checkIntegrity runs SQLite's quick_check: every page of every table and
// index is read and its structure verified (it skips only matching index
// entries to rows, the slow part of integrity_check). A file with zeroed or
// overwritten pages otherwise opens, and fails later, job by job, inside
// the committer and the dispatcher, with a server that looks healthy.
func checkIntegrity(conn *sql.Conn, path string) error {
	rows, err := conn.QueryContext(context.Background(), "PRAGMA quick_check(10)")
	if err != nil {
		return damaged(path, "PRAGMA quick_check", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return damaged(path, "PRAGMA quick_check", err)
		}
		problems = append(problems, p)
	}
	if err := rows.Err(); err != nil {
		return damaged(path, "PRAGMA quick_check", err)
	}
	if len(problems) == 1 && problems[0] == "ok" {
		return nil
	}
	return damaged(path, "PRAGMA quick_check", errors.New(strings.Join(problems, "; ")))
}

// damaged is the error for a file that is not an intact database, found
// so by what (the step of Open that failed).
func damaged(path, what string, err error) error {
	return fmt.Errorf("sqlite: %s is damaged: %w: %s: %v; restore it from a backup (sqlite3's .recover can salvage what is left)", path, ErrDamaged, what, err)
}

// isDamage reports whether err is SQLite finding the file malformed or not
// a database at all.
func isDamage(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
}
