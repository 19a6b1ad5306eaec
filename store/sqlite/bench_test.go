package sqlite

import (
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
