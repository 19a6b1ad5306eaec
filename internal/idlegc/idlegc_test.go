package idlegc

import (
	"runtime"
	"testing"
	"time"
)

func TestDueThreeFifthsOfTheWayToTheGoal(t *testing.T) {
	for _, c := range []struct {
		objects, live, goal uint64
		want                bool
	}{
		{objects: 20, live: 20, goal: 40, want: false}, // just collected
		{objects: 31, live: 20, goal: 40, want: false},
		{objects: 32, live: 20, goal: 40, want: true},
		{objects: 39, live: 20, goal: 40, want: true},
		{objects: 50, live: 40, goal: 40, want: false}, // no goal above what lives: the runtime's business
	} {
		if got := due(c.objects, c.live, c.goal); got != c.want {
			t.Errorf("due(objects %d, live %d, goal %d) = %v, want %v", c.objects, c.live, c.goal, got, c.want)
		}
	}
}

// TestALullMustOutlastACollection: the Collector collects only in a lull
// twice as long as its last collection took (minLull before the first),
// and only when the heap is due.
func TestALullMustOutlastACollection(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	objects := uint64(35)
	collections := 0
	c := newCollector(clock, func() (uint64, uint64, uint64) { return objects, 20, 40 }, func() {
		collections++
		now = now.Add(80 * time.Millisecond) // the collection takes 80 ms
	})
	step := func(name string, lull time.Duration, want bool) {
		t.Helper()
		before := collections
		if got := c.lull(now.Add(lull)); got != want || collections-before != map[bool]int{true: 1}[want] {
			t.Errorf("%s: collected %v (%d times), want %v", name, got, collections-before, want)
		}
	}
	step("a lull shorter than minLull", minLull-time.Millisecond, false)
	step("a lull of minLull, the heap due", minLull, true)
	step("shorter than twice the 80 ms the last one took", 159*time.Millisecond, false)
	step("twice that", 160*time.Millisecond, true)
	objects = 25
	step("the heap not yet three fifths of the way", time.Second, false)
}

// TestIdleNeverBlocks: with no goroutine taking the lulls, a second one
// told is dropped rather than waited on (the test hangs otherwise).
func TestIdleNeverBlocks(t *testing.T) {
	c := newCollector(time.Now, readHeap, func() {})
	for range 3 {
		c.Idle(time.Now().Add(time.Second))
	}
}

// TestReadHeapReadsTheRuntime: the three figures come from the runtime,
// which names them as readHeap expects (an unknown name reads as zero).
func TestReadHeapReadsTheRuntime(t *testing.T) {
	runtime.GC() // before the first collection nothing has been found live
	objects, live, goal := readHeap()
	if objects == 0 || live == 0 || goal <= live {
		t.Errorf("readHeap() = objects %d, live %d, goal %d; want all set, the goal above what lives", objects, live, goal)
	}
}
