// Package idlegc runs the garbage collector while the process has nothing
// due, instead of where the runtime's pacer would start it.
//
// A cron service's work comes in bursts: every job on a minute's second
// falls due at that second's turn, and most jobs in the world are on the
// minute's or the hour's. The bursts are where the process allocates, so
// a collection paced by allocation starts inside one, nearly always; its
// write barriers, background workers and pauses then slow the very
// launches a burst is made of. At 10,000 every-minute jobs a collection
// ran every 3-4 s and started 8-23 ms into a burst, and those bursts' last
// launches were 41 ms late against 28 ms for the others
// (docs/benchmarks.md, "The collector in the lulls").
//
// A Collector is told when the dispatcher goes to sleep with no task in
// hand, and until when (Idle). If the heap has grown at least three
// fifths of the way from what the last collection left to the runtime's
// next goal, and the lull is long enough for a collection like the last
// one it forced, it collects there and then: the runtime's own collection
// would come in one of the next bursts anyway. It never stops one the
// runtime starts.
package idlegc

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// minLull is the shortest lull worth a collection before the Collector has
// timed one: a collection of a few tens of MB of heap takes 10-30 ms.
const minLull = 100 * time.Millisecond

// Collector collects garbage in the lulls it is told of. Its zero value is
// not usable: use Start.
type Collector struct {
	now   func() time.Time
	lulls chan time.Time
	// took is how long the last forced collection took; a lull must be
	// twice that.
	took    time.Duration
	heap    func() (objects, live, goal uint64)
	collect func()
}

// Start returns a Collector whose goroutine runs until ctx is done.
func Start(ctx context.Context, now func() time.Time) *Collector {
	c := newCollector(now, readHeap, runtime.GC)
	go c.run(ctx)
	return c
}

func newCollector(now func() time.Time, heap func() (objects, live, goal uint64), collect func()) *Collector {
	return &Collector{now: now, lulls: make(chan time.Time, 1), took: minLull / 2, heap: heap, collect: collect}
}

// readHeap reads the heap's objects (garbage not yet collected included),
// what the last collection left live, and the goal of the next one.
func readHeap() (objects, live, goal uint64) {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/goal:bytes"},
	}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
}

// Idle says that nothing is due before until. It never blocks: a lull
// told while the Collector is busy with the last one is dropped.
func (c *Collector) Idle(until time.Time) {
	select {
	case c.lulls <- until:
	default:
	}
}

func (c *Collector) run(ctx context.Context) {
	for {
		select {
		case until := <-c.lulls:
			c.lull(until)
		case <-ctx.Done():
			return
		}
	}
}

// lull collects if the lull ending at until is long enough and the heap
// is far enough on its way to the goal, and reports whether it did.
func (c *Collector) lull(until time.Time) bool {
	start := c.now()
	if until.Sub(start) < 2*c.took {
		return false
	}
	if !due(c.heap()) {
		return false
	}
	c.collect()
	c.took = c.now().Sub(start)
	return true
}

// due reports whether a heap of objects bytes, live bytes having survived
// the last collection, is at least three fifths of the way to the next
// goal. A second's burst of 10,000 every-minute jobs allocates about a
// fifth of the way, so the collection comes in a lull before the pacer
// starts one in a burst.
func due(objects, live, goal uint64) bool {
	if goal <= live {
		return false
	}
	return objects >= live+(goal-live)*3/5
}
