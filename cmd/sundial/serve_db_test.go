package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
