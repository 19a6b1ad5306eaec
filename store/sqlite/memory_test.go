package sqlite

import (
	"bytes"
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"modernc.org/sqlite"

	"github.com/sundial-cron/sundial/store"
)

// cacheUsed is SQLite's count of the bytes in conn's page cache.
func cacheUsed(conn *sql.Conn) (int, error) {
	var used int
	err := conn.Raw(func(dc any) error {
		st, ok := dc.(sqlite.DBStatus)
		if !ok {
			return fmt.Errorf("driver connection %T reports no status", dc)
		}
		var err error
		used, _, err = st.Status(sqlite.DBStatusCacheUsed, false)
		return err
	})
	return used, err
}

// The committer's page cache stays within 8 MiB however large the file: a
// cache that grows with the file costs the process about twice the file's
// size in resident memory (docs/benchmarks.md, "Memory at 10,000 jobs").
func TestCommitterPageCacheIsBounded(t *testing.T) {
	t.Parallel()
	s := openAt(t, tempPath(t), Options{}, testHooks{})

	// Three times the bound of job rows, written through Updates as the
	// engine writes them, then every page read back on the committer.
	const bound = 8 << 20
	const jobs = 3 * bound / 4096
	state := bytes.Repeat([]byte{'s'}, 4000)
	var wg sync.WaitGroup
	errs := make(chan error, jobs)
	for i := range jobs {
		wg.Go(func() {
			id := fmt.Sprintf("p/job%05d", i)
			_, err := s.Update(t.Context(), id, func(tx store.Tx) error {
				return tx.PutJob(&store.JobRecord{ID: id, Project: "p", State: "SCHEDULED", EncodedState: state})
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var used, total int
	err := s.write(t.Context(), false, nil, func(w *writer) error {
		if err := w.queryRow("SELECT sum(length(machine)) FROM jobs").Scan(&total); err != nil {
			return err
		}
		var err error
		used, err = cacheUsed(w.conn)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total != jobs*len(state) {
		t.Fatalf("read %d bytes of state back, want %d", total, jobs*len(state))
	}
	// SQLite counts the cache's hash table and headers too, and pages
	// the statement still holds, up to an eighth over the bound in these
	// runs; a cache sized to the file would hold the whole table.
	if limit := bound * 3 / 2; used > limit || used < bound/2 {
		t.Errorf("after reading a %d MiB table the committer's page cache holds %d KiB; want at most %d KiB (the bound and a half), and more than half the bound",
			total>>20, used>>10, limit>>10)
	}
}
