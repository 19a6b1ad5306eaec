package console_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
)

// buildBig is a project of 10,000 jobs, the first 100 of them with 20
// invocations each (the strips of the first pages) and job-00000 with
// 1,000.
func buildBig(tb testing.TB) *site {
	s := newSite(tb)
	rev := engine.Revision{ID: "bench", File: "big.yaml"}
	for i := range 10000 {
		rev.Jobs = append(rev.Jobs, engine.Job{ID: fmt.Sprintf("big/job-%05d", i), Definition: engine.Definition{
			Schedule: "H * * * *", Target: "noop", Spec: []byte(`{}`),
		}})
	}
	if err := s.eng.ApplyProject(s.ctx, "big", rev); err != nil {
		tb.Fatal(err)
	}
	put := func(jobID string, n int) {
		_, err := s.st.Update(s.ctx, jobID, func(tx store.Tx) error {
			for k := range n {
				at := t0.Add(-time.Duration(k+1) * time.Hour)
				status, msg := "SUCCEEDED", "noop: done"
				if k%7 == 3 {
					status, msg = "FAILED", "noop: failing as asked"
				}
				inv := &store.InvocationRecord{JobID: jobID, ID: at.Format("20060102T150405Z"), Occurrence: at, Status: status, Attempt: 1,
					Created: at, Started: at.Add(2 * time.Second), Ended: at.Add(time.Duration(30+k%90) * time.Second), Message: msg,
					Log: []byte("a line of the job's output\nanother line\n")}
				if err := tx.PutInvocation(inv); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	for i := range 100 {
		put(fmt.Sprintf("big/job-%05d", i), 20)
	}
	put("big/job-00000", 1000)
	return s
}

func benchPage(b *testing.B, s *site, path string) {
	b.Helper()
	if p := s.get(b, admin, path); p.status != http.StatusOK {
		b.Fatalf("%s: %d %s", path, p.status, p.text())
	}
	b.ReportAllocs()
	for b.Loop() {
		s.get(b, admin, path)
	}
}

// The console's pages over a project of 10,000 jobs: go test
// ./web/console/ -run '^$' -bench . (figures in docs/benchmarks.md).
func BenchmarkConsole(b *testing.B) {
	s := buildBig(b)
	b.Run("jobs page, 10000 jobs", func(b *testing.B) { benchPage(b, s, "/projects/big") })
	b.Run("jobs page, 10000 jobs, failing filter", func(b *testing.B) { benchPage(b, s, "/projects/big?failing=1") })
	b.Run("jobs page, 10000 jobs, page 150", func(b *testing.B) { benchPage(b, s, "/projects/big?page=150") })
	b.Run("projects page, 10000 jobs", func(b *testing.B) { benchPage(b, s, "/") })
	b.Run("fleet page, 10000 jobs", func(b *testing.B) { benchPage(b, s, "/fleet") })
	b.Run("grid page, 10000 jobs", func(b *testing.B) { benchPage(b, s, "/projects/big/grid") })
	b.Run("job page, 1000 invocations", func(b *testing.B) { benchPage(b, s, "/projects/big/jobs/job-00000") })
	b.Run("job page, 1000 invocations, 7 days", func(b *testing.B) { benchPage(b, s, "/projects/big/jobs/job-00000?span=7d") })
}
