package engine

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/sundial-cron/sundial/store/sqlite"
)

// recordVersions are the versions of the stored records a release writes:
// a job's state, its definition, a project's record.
type recordVersions struct{ state, definition, project int }

// recordsSince says which record versions releases write from each SQLite
// schema version on, oldest first (from the first release that promised
// to refuse what it cannot read: 0.1.0, at schema 6).
//
// An older release meeting a newer database must refuse it at start, with
// what to do: store/sqlite does so for a schema version past its own
// (ErrNewerSchema). A record of a newer version it would find only job by
// job, once running: the job would wait unrun and its tasks fail for
// ever, and a project's record would be replaced. So a release that
// writes a newer record version also appends a migration to
// store/sqlite/schema.go (an empty one will do) and a line here.
var recordsSince = []struct {
	schema int
	recordVersions
}{
	{6, recordVersions{state: 1, definition: 1, project: 1}},
}

// TestANewerRecordVersionComesWithANewerSchema: the record versions this
// release writes are recordsSince's last, at a schema version no newer
// than this release's and newer than the line before.
func TestANewerRecordVersionComesWithANewerSchema(t *testing.T) {
	t.Parallel()
	schema := schemaVersion(t)
	last := recordsSince[len(recordsSince)-1]
	if now := (recordVersions{stateVersion, definitionVersion, projectVersion}); now != last.recordVersions {
		t.Fatalf("this release writes records of versions %+v, and recordsSince ends at %+v (schema %d): append a migration "+
			"to store/sqlite/schema.go, so that an older release refuses the database at start, and a line for its schema version here",
			now, last.recordVersions, last.schema)
	}
	if last.schema > schema {
		t.Errorf("recordsSince's last line names schema version %d, and this release's is %d: append the migration", last.schema, schema)
	}
	for i := 1; i < len(recordsSince); i++ {
		if recordsSince[i].schema <= recordsSince[i-1].schema {
			t.Errorf("recordsSince: %+v comes at schema version %d, after %+v at %d: each change of record versions needs a newer schema version",
				recordsSince[i].recordVersions, recordsSince[i].schema, recordsSince[i-1].recordVersions, recordsSince[i-1].schema)
		}
	}
}

// schemaVersion is the schema version of a database this release creates.
func schemaVersion(t *testing.T) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sundial.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
