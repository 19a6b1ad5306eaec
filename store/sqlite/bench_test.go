package sqlite

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// BenchmarkUpdate measures group commit: Updates from 1, 16 or 64
// goroutines, each writing what a launch writes (the job, an invocation,
// a task), with durable (FULL) or NORMAL commits. It reports updates/s and
// physical commits per Update.
//
//	go test ./store/sqlite -run '^$' -bench BenchmarkUpdate -benchtime 3s
func BenchmarkUpdate(b *testing.B) {
	blob := make([]byte, 256)
	for _, mode := range []struct {
		name string
		sync Sync
	}{{"FULL", SyncFull}, {"NORMAL", SyncNormal}} {
		for _, writers := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("sync=%s/writers=%d", mode.name, writers), func(b *testing.B) {
				s := openAt(b, tempPath(b), Options{Synchronous: mode.sync}, testHooks{})
				t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
				update := func(i int64) error {
					id := fmt.Sprintf("bench/job%04d", i%1024)
					_, err := s.Update(b.Context(), id, func(tx store.Tx) error {
						at := t0.Add(time.Duration(i) * time.Second)
						err := tx.PutJob(&store.JobRecord{ID: id, Project: "bench", State: "RUNNING", WatchdogTimerTs: at, Definition: blob, EncodedState: blob})
						if err == nil {
							err = tx.PutInvocation(&store.InvocationRecord{JobID: id, ID: fmt.Sprintf("inv%d", i), Occurrence: at, Status: "LAUNCHING", Created: at, Definition: blob})
						}
						if err == nil {
							err = tx.Enqueue(task.Task{Kind: task.StartInvocation, JobID: id, Nonce: i, ETA: at, Invocation: fmt.Sprintf("inv%d", i), Attempt: 1})
						}
						return err
					})
					return err
				}
				before := s.Stats()
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for range writers {
					wg.Go(func() {
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							if err := update(i); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				after := s.Stats()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
				b.ReportMetric(float64(after.Commits-before.Commits)/float64(b.N), "commits/update")
				b.ReportMetric(0, "ns/op") // updates/s says it, per Update rather than per goroutine
			})
		}
	}
}

// BenchmarkIntegrityCheck measures the quick_check Open runs, on a file of
// 100,000 jobs with 5 invocations each (the build is not timed). It
// reports the file's size.
//
//	go test ./store/sqlite -run '^$' -bench BenchmarkIntegrityCheck -benchtime 3x
func BenchmarkIntegrityCheck(b *testing.B) {
	path := tempPath(b)
	s := openAt(b, path, Options{Synchronous: SyncNormal}, testHooks{})
	blob := make([]byte, 400)
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= 100_000; i = next.Add(1) {
				id := fmt.Sprintf("bench/job%06d", i)
				if _, err := s.Update(b.Context(), id, func(tx store.Tx) error {
					err := tx.PutJob(&store.JobRecord{ID: id, Project: "bench", State: "SCHEDULED", WatchdogTimerTs: t0, Definition: blob, EncodedState: blob})
					for n := range 5 {
						at := t0.Add(time.Duration(n) * time.Minute)
						err = errors.Join(err, tx.PutInvocation(&store.InvocationRecord{JobID: id, ID: fmt.Sprintf("inv%d", n), Occurrence: at, Status: "SUCCEEDED", Created: at, Definition: blob}))
					}
					return err
				}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	conn, err := s.read.Conn(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	var pages, pageSize int64
	if err := conn.QueryRowContext(b.Context(), "SELECT page_count, page_size FROM pragma_page_count, pragma_page_size").Scan(&pages, &pageSize); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := checkIntegrity(conn, path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pages*pageSize)/(1<<20), "MiB")
}

// BenchmarkDefine measures defining new jobs, as a first start or a config
// import does: from 1,024 goroutines, each Update, marked store.NewJob as
// the engine marks the jobs a revision adds, finds its job absent and
// writes what the engine writes for a new job (the job, its definition,
// its first tick). It reports jobs/s and physical commits per job.
//
//	go test ./store/sqlite -run '^$' -bench BenchmarkDefine -benchtime 100000x
func BenchmarkDefine(b *testing.B) {
	state, def := make([]byte, 256), make([]byte, 48)
	s := openAt(b, tempPath(b), Options{}, testHooks{})
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 1024 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				id := fmt.Sprintf("bench%03d/job%07d", i%100, i)
				_, err := s.Update(store.NewJob(b.Context()), id, func(tx store.Tx) error {
					if _, err := tx.Job(); !errors.Is(err, store.ErrNotFound) {
						return fmt.Errorf("Job: %v, want ErrNotFound", err)
					}
					at := t0.Add(time.Duration(i%60) * time.Second)
					if _, err := tx.PutDefinition(def); err != nil {
						return err
					}
					if err := tx.PutJob(&store.JobRecord{ID: id, Project: fmt.Sprintf("bench%03d", i%100), State: "SCHEDULED", WatchdogTimerTs: at.Add(30 * time.Second), Definition: def, EncodedState: state}); err != nil {
						return err
					}
					return tx.Enqueue(task.Task{Kind: task.TickLater, JobID: id, Nonce: i, ETA: at})
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(s.Stats().Commits)/float64(b.N), "commits/job")
	b.ReportMetric(0, "ns/op")
}
