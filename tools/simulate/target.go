package simulate

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/target"
)

// spec is the simulated target's part of a job definition.
type spec struct {
	Duration time.Duration `json:"duration"` // how long each attempt runs
	FailRate float64       `json:"fail_rate"`
	// Sync: the attempt runs within the call, which returns its outcome,
	// as url_fetch and command do; Duration is then not used.
	Sync bool `json:"sync,omitempty"`
}

// simTarget stands for a target that runs attempts on its own (like
// Swarming): Launch returns Running, and the simulator reports the end
// when the simulated time comes; or, for a spec that says Sync, for one
// that runs them within the call (like url_fetch). It counts every launch
// by idempotency key and attempt, which is how the simulator sees double
// launches. It can tell by key whether a launch happened (a
// target.Resolver); blindTarget, the same target without that, makes
// ambiguous launches fail closed.
type simTarget struct {
	sim *sim

	mu       sync.Mutex
	launches map[attemptKey]int
	ended    map[attemptKey]target.Result
}

type attemptKey struct {
	key     string
	attempt int
}

func newSimTarget(s *sim) *simTarget {
	return &simTarget{sim: s, launches: map[attemptKey]int{}, ended: map[attemptKey]target.Result{}}
}

func (t *simTarget) Launch(ctx context.Context, req target.Request) target.Result {
	var sp spec
	if err := json.Unmarshal(req.Spec, &sp); err != nil {
		return target.Result{Status: target.Failed, Message: err.Error()}
	}
	k := attemptKey{req.Key, req.Attempt}
	t.mu.Lock()
	t.launches[k]++
	n := t.launches[k]
	t.mu.Unlock()
	if n > 1 {
		t.sim.doubleLaunch(req, n)
	}
	t.sim.launched(req)
	res := target.Result{Status: target.Succeeded, Message: "done"}
	if t.sim.rng.Float64() < sp.FailRate {
		res = target.Result{Status: target.Failed, Message: "simulated failure"}
	}
	if sp.Sync {
		t.mu.Lock()
		t.ended[k] = res
		t.mu.Unlock()
		t.sim.note(req.JobID, "target ran %s#%d within the call: %s", req.Invocation, req.Attempt, statusName[res.Status])
		return res
	}
	t.sim.note(req.JobID, "target started %s#%d, to end in %v", req.Invocation, req.Attempt, sp.Duration.Round(time.Second))
	t.sim.at(t.sim.now.Add(sp.Duration), func() { t.end(req, res) })
	return target.Result{Status: target.Running, Message: "accepted"}
}

// statusName names the outcomes in timelines.
var statusName = map[target.Status]string{target.Failed: "failed", target.Succeeded: "succeeded", target.Running: "running"}

// end reports an attempt's end; a report the store refused is tried again
// a minute later, as a poller would.
func (t *simTarget) end(req target.Request, res target.Result) {
	k := attemptKey{req.Key, req.Attempt}
	t.mu.Lock()
	t.ended[k] = res
	t.mu.Unlock()
	err := t.sim.engine.Report(t.sim.ctx, req.JobID, req.Invocation, req.Attempt, res)
	t.sim.note(req.JobID, "target reported %s#%d %s: %s", req.Invocation, req.Attempt, statusName[res.Status], errOrOK(err))
	if err != nil {
		t.sim.at(t.sim.now.Add(time.Minute), func() { t.end(req, res) })
	}
}

func (t *simTarget) Resolve(ctx context.Context, req target.Request) (bool, target.Result, error) {
	k := attemptKey{req.Key, req.Attempt}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.launches[k] == 0 {
		return false, target.Result{}, nil
	}
	if res, ok := t.ended[k]; ok {
		return true, res, nil
	}
	return true, target.Result{Status: target.Running}, nil
}

// blindTarget is a simTarget that cannot tell whether a launch happened.
type blindTarget struct{ t *simTarget }

func (b blindTarget) Launch(ctx context.Context, req target.Request) target.Result {
	return b.t.Launch(ctx, req)
}
