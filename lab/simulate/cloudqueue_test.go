package simulate

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/task"
)

// queueHarness is a cloudQueue on a clock the test moves, recording what
// it delivers.
type queueHarness struct {
	now       time.Time
	q         *cloudQueue
	delivered []string
	fail      map[string]bool // names whose deliveries fail
}

func newQueueHarness() *queueHarness {
	h := &queueHarness{now: start, fail: map[string]bool{}}
	h.q = newCloudQueue(func() time.Time { return h.now }, func(_ context.Context, t task.Task) error {
		// One delivery at a time: the tests post few tasks per instant.
		h.delivered = append(h.delivered, t.Name())
		if h.fail[t.Name()] {
			return errors.New("handler failed")
		}
		return nil
	})
	h.q.workers = 1
	return h
}

// at moves the clock to t and delivers what is due.
func (h *queueHarness) at(t *testing.T, at time.Time) []string {
	t.Helper()
	h.now = at
	h.delivered = nil
	if _, _, err := h.q.runDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	return h.delivered
}

func tick(nonce int64, eta time.Time) task.Task {
	return task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: nonce, ETA: eta}
}

func TestCloudQueue(t *testing.T) {
	const a, b = "p/j/tick/1", "p/j/tick/2"
	tests := []struct {
		name string
		run  func(t *testing.T, h *queueHarness) []string
		want []string
	}{
		{"a task is delivered at its ETA, not before", func(t *testing.T, h *queueHarness) []string {
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start.Add(time.Minute))})
			if got := h.at(t, start.Add(59*time.Second)); len(got) > 0 {
				t.Errorf("delivered %v before the ETA", got)
			}
			return h.at(t, start.Add(time.Minute))
		}, []string{a}},
		{"a repeated create is one task", func(t *testing.T, h *queueHarness) []string {
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start)})
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start), tick(2, start)})
			return h.at(t, start.Add(time.Second))
		}, []string{a, b}},
		{"a name delivered within the hour is refused", func(t *testing.T, h *queueHarness) []string {
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start)})
			h.at(t, start.Add(time.Second))
			_ = h.q.Post(t.Context(), []task.Task{tick(1, h.now)})
			if got := h.at(t, start.Add(30*time.Minute)); len(got) > 0 {
				t.Errorf("a name used 30 minutes ago was delivered again: %v", got)
			}
			h.now = start.Add(61 * time.Minute)
			_ = h.q.Post(t.Context(), []task.Task{tick(1, h.now)})
			return h.at(t, start.Add(62*time.Minute))
		}, []string{a}},
		{"a task created now is dispatched later, not in the same instant", func(t *testing.T, h *queueHarness) []string {
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start)})
			if got := h.at(t, start); len(got) > 0 {
				t.Errorf("delivered %v at the instant of its create", got)
			}
			return h.at(t, start.Add(time.Second))
		}, []string{a}},
		{"a failed delivery is retried with queue.yaml's backoff", func(t *testing.T, h *queueHarness) []string {
			h.fail[a] = true
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start.Add(time.Second))})
			h.at(t, start.Add(time.Second))   // fails: retry after 1s
			h.at(t, start.Add(2*time.Second)) // fails: retry after 2s
			if got := h.at(t, start.Add(3*time.Second)); len(got) > 0 {
				t.Errorf("retried %v before its backoff", got)
			}
			h.fail[a] = false
			return h.at(t, start.Add(4*time.Second))
		}, []string{a}},
		{"a purge deletes every task and refuses their names", func(t *testing.T, h *queueHarness) []string {
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start.Add(time.Minute))})
			h.q.purge()
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start.Add(time.Minute)), tick(2, start.Add(time.Minute))})
			return h.at(t, start.Add(time.Hour))
		}, []string{b}},
		{"tasks due while the service is down come after a backoff past the outage", func(t *testing.T, h *queueHarness) []string {
			_ = h.q.Post(t.Context(), []task.Task{tick(1, start.Add(time.Minute)), tick(2, start.Add(time.Hour))})
			h.q.down(start, start.Add(10*time.Minute))
			if got := h.at(t, start.Add(10*time.Minute)); len(got) > 0 {
				t.Errorf("delivered %v the instant the outage ended, before the backoff", got)
			}
			next, ok := h.q.next()
			if !ok || !next.After(start.Add(10*time.Minute)) || next.After(start.Add(15*time.Minute)) {
				t.Errorf("next delivery at %v, want within max_backoff (5m) after the outage", next)
			}
			return h.at(t, start.Add(15*time.Minute))
		}, []string{a}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newQueueHarness()
			if got := tc.run(t, h); !slices.Equal(got, tc.want) {
				t.Errorf("delivered %v, want %v", got, tc.want)
			}
		})
	}
}
