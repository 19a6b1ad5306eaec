package simulate

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestStuckJobTimeline: a stuck job's timeline is its last eventsBefore
// events up to the pass that found it, the process's events among them by
// time, and its first eventsAfter events since, oldest first; other jobs'
// events are not in it, and only the first stuckListed jobs get one.
func TestStuckJobTimeline(t *testing.T) {
	var tl timelines
	at := func(i int) time.Time { return start.Add(time.Duration(i) * time.Second) }
	for i := range 100 {
		tl.note("p0/a", at(i), 0, "a %d", i)
		tl.note("p0/b", at(i), 0, "b %d", i)
	}
	tl.noteProcess(at(95), 0, "down")
	tl.stuckNow("p0/a", 2*time.Minute)
	for i := 100; i < 130; i++ {
		tl.note("p0/a", at(i), 0, "a %d", i)
	}
	got := tl.report()
	if len(got) != 1 || got[0].Job != "p0/a" || got[0].WaitSeconds != 120 {
		t.Fatalf("report %+v, want p0/a alone, waited 120 s", got)
	}
	var want []string
	for i := 100 - eventsBefore; i < 100+eventsAfter; i++ {
		if i == 96 {
			want = append(want, stamp(at(95), 0)+" process: down")
		}
		want = append(want, fmt.Sprintf("%s a %d", stamp(at(i), 0), i))
	}
	if !slices.Equal(got[0].Timeline, want) {
		t.Errorf("timeline\n%q\nwant\n%q", got[0].Timeline, want)
	}
	for i := range 2 * stuckListed {
		tl.stuckNow(fmt.Sprintf("p1/%d", i), time.Minute)
	}
	if n := len(tl.report()); n != stuckListed {
		t.Errorf("%d stuck jobs listed, want %d", n, stuckListed)
	}
}
