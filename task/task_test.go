package task_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/sundial-cron/sundial/task"
)

// TestTaskNamesNeverChange: a task's name is stored, in the task tables
// and as Cloud Tasks ids, so a release must name a task as every earlier
// one did: "JOB/KIND/NONCE", the nonce in decimal.
func TestTaskNamesNeverChange(t *testing.T) {
	for _, c := range []struct {
		task task.Task
		want string
	}{
		{task.Task{JobID: "proj/job", Kind: task.TickLater, Nonce: 42}, "proj/job/tick/42"},
		{task.Task{JobID: "proj/jöb", Kind: task.StartInvocation, Nonce: -7}, "proj/jöb/start/-7"},
		{task.Task{JobID: "p/j", Kind: task.PollInvocation, Nonce: math.MinInt64}, "p/j/poll/-9223372036854775808"},
		{task.Task{Kind: task.TickLater}, "/tick/0"},
	} {
		if got := c.task.Name(); got != c.want {
			t.Errorf("%+v: name %q, want %q", c.task, got, c.want)
		}
	}
}

func FuzzTaskNameIsTheFormatted(f *testing.F) {
	f.Add("proj/job", "tick", int64(5776522452612251551))
	f.Fuzz(func(t *testing.T, job, kind string, nonce int64) {
		tk := task.Task{JobID: job, Kind: task.Kind(kind), Nonce: nonce}
		if got, want := tk.Name(), fmt.Sprintf("%s/%s/%d", job, kind, nonce); got != want {
			t.Fatalf("name %q, want %q", got, want)
		}
	})
}
