package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestANewerSchemaIsRefusedWithWhatToDo: a file whose schema a newer
// release migrated (its user_version past this release's migrations) is
// refused at Open, the error naming the file, both versions and what to do,
// and the file is left byte for byte as it was: this release neither
// migrates it nor writes a row to it.
func TestANewerSchemaIsRefusedWithWhatToDo(t *testing.T) {
	t.Parallel()
	path := filledFile(t, 3)
	newer := len(migrations) + 1
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(path, Options{})
	if err == nil {
		s.Close()
		t.Fatalf("Open of a file at schema version %d succeeded", newer)
	}
	for _, want := range []string{
		path + " was written by a newer release of Sundial",
		fmt.Sprintf("schema version %d; this release reads versions up to %d", newer, len(migrations)),
		"run the newer release, or restore the backup taken before the upgrade",
	} {
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open = %v; want ErrNewerSchema saying %q", err, want)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("Open changed the refused file")
	}
}
