package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store/sqlite"
)

// A database file emptied to 0 bytes stops the server at start, with an
// error naming the file, instead of a server that starts afresh with no
// jobs and no history; and the file is left as it was.
func TestServeRefusesAnEmptiedDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	db := filepath.Join(dir, "sundial.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := runServe([]string{"--db", db, "--config-dir", configs, "--listen", "127.0.0.1:0"}, io.Discard, &stderr, time.Now)
	if code != 1 || !strings.Contains(stderr.String(), db) || !strings.Contains(stderr.String(), "0 bytes") {
		t.Fatalf("serve on an empty database file: exit %d, log:\n%s\nwant exit 1 and an error naming %s", code, stderr.String(), db)
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Fatalf("the refused file was changed: %v, %v", fi, err)
	}
}

// A database a newer release migrated stops this release's server at
// start, with what to do (docs/upgrade.md, "Going back"), and is left as
// it was: here a backup of it, restored for this release by mistake,
// keeps its mark unconsumed, so that the newer release started on it
// later still knows when it was first started.
func TestServeRefusesADatabaseOfANewerRelease(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	live, backup := filepath.Join(dir, "sundial.db"), filepath.Join(dir, "before-downgrade.db")
	st, err := sqlite.Open(live, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if code := runBackup([]string{"--db", live, backup}, io.Discard, io.Discard, time.Now); code != 0 {
		t.Fatalf("sundial backup: exit %d", code)
	}
	const newer = 99
	db, err := sql.Open("sqlite", backup)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	code := runServe([]string{"--db", backup, "--config-dir", configs, "--listen", "127.0.0.1:0"}, io.Discard, &stderr, time.Now)
	for _, want := range []string{
		backup + " was written by a newer release of Sundial (schema version 99;",
		"run the newer release, or restore the backup taken before the upgrade",
	} {
		if code != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("serve on a database of schema version %d: exit %d, log:\n%s\nwant exit 1 and %q", newer, code, stderr.String(), want)
		}
	}
	var version int
	var firstStart sql.NullInt64
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT first_start FROM backup").Scan(&firstStart); err != nil {
		t.Fatal(err)
	}
	if version != newer || firstStart.Valid {
		t.Errorf("the refused file was changed: schema version %d, first start recorded %v; want %d and none", version, firstStart.Valid, newer)
	}
}
