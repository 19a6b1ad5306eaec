package schedule

import (
	"sync"
	"testing"
	"time"
)

// A Schedule is shared by every goroutine that fires its job, so Next, Prev
// and Explain must not write to it (gorhill/cronexpr's Next does, and races).
// Run under -race (CI does): a write inside any of them fails this test.
func TestScheduleIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("*/7 1-3 * * MON-FRI", Options{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	want := s.Explain()
	var wg sync.WaitGroup
	results := make([][]time.Time, 8)
	for g := range results {
		wg.Go(func() {
			for at := range s.Between(start, start.AddDate(0, 0, 14)) {
				results[g] = append(results[g], at)
				if p, ok := s.Prev(at); !ok || !p.Equal(at) {
					t.Errorf("Prev(%v) = %v, %v", at, p, ok)
				}
			}
			if got := s.Explain(); got != want {
				t.Errorf("Explain changed under concurrency: %q", got)
			}
		})
	}
	wg.Wait()
	for g := 1; g < len(results); g++ {
		if len(results[g]) != len(results[0]) || len(results[0]) == 0 {
			t.Fatalf("goroutine %d saw %d fire times, goroutine 0 saw %d", g, len(results[g]), len(results[0]))
		}
		for i := range results[g] {
			if !results[g][i].Equal(results[0][i]) {
				t.Fatalf("goroutine %d fire time %d = %v, goroutine 0 saw %v", g, i, results[g][i], results[0][i])
			}
		}
	}
}
