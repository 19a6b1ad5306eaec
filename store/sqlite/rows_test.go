package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/task/taskrows/rowstest"
)

func TestRowsConformance(t *testing.T) {
	t.Parallel()
	rowstest.Run(t, func(t *testing.T) rowstest.Store {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
