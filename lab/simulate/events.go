package simulate

import (
	"container/heap"
	"time"
)

// events is the simulator's agenda: callbacks at simulated times, taken in
// time order and, at one time, in the order they were added.
type events []event

type event struct {
	at  time.Time
	seq int
	fn  func()
	// alone: the event changes the whole process (its clock, its queue),
	// so it runs by itself, after the events before it and before those
	// after it. Other events of a step run concurrently, as a process's
	// handlers do.
	alone bool
}

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if c := e[i].at.Compare(e[j].at); c != 0 {
		return c < 0
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

func (e *events) add(ev event) { heap.Push(e, ev) }

// next returns the time of the earliest event.
func (e events) next() (time.Time, bool) {
	if len(e) == 0 {
		return time.Time{}, false
	}
	return e[0].at, true
}

// popDue removes and returns the earliest event if it is due at now.
func (e *events) popDue(now time.Time) (event, bool) {
	if len(*e) == 0 || (*e)[0].at.After(now) {
		return event{}, false
	}
	return heap.Pop(e).(event), true
}
