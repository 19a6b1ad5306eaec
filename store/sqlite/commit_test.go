package sqlite

import (
	"slices"
	"testing"
)

// The committer takes the requests a launch may wait for before the
// deferrable ones (store.Deferrable), but passes a deferrable one over for
// one batch at most: a stream of launches cannot starve the records of
// what the targets returned.
func TestDeferrableRequestsWaitForAtMostOneBatch(t *testing.T) {
	var q queue
	q.init()
	names := map[*request]string{}
	push := func(name string, deferrable bool) {
		r := &request{deferrable: deferrable}
		names[r] = name
		q.push(r)
	}
	take := func(step string, max int, want ...string) {
		t.Helper()
		var got []string
		for _, r := range q.take(max) {
			got = append(got, names[r])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: took %q, want %q", step, got, want)
		}
	}
	push("u1", false)
	push("d1", true)
	push("u2", false)
	take("the others first", 10, "u1", "u2")
	push("u3", false)
	take("a deferrable request passed over once goes next, after the others", 10, "u3", "d1")
	push("d2", true)
	take("alone, at once", 10, "d2")
	push("u4", false)
	push("d3", true)
	push("u5", false)
	take("within max", 1, "u4")
	take("passed over once, so taken with the others", 10, "u5", "d3")
}

// Closing answers every waiting request, the deferrable ones too, even
// when a batch would pass them over: their callers wait for an answer.
func TestCloseReturnsTheDeferrableRequestsToo(t *testing.T) {
	var q queue
	q.init()
	u, d := &request{}, &request{deferrable: true}
	q.push(u)
	q.push(d)
	if got := q.close(); len(got) != 2 || got[0] != u || got[1] != d {
		t.Errorf("close returned %d requests; want both the waiting ones", len(got))
	}
	if q.push(&request{}) {
		t.Error("a closed queue took a request")
	}
}
