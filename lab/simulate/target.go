package simulate

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/targets"
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
// targets.Resolver); blindTarget, the same target without that, makes
// ambiguous launches fail closed.
type simTarget struct {
	sim *sim

	mu       sync.Mutex
	launches map[attemptKey]int
	ended    map[attemptKey]targets.Result
}

type attemptKey struct {
	key     string
	attempt int
}

func newSimTarget(s *sim) *simTarget {
	return &simTarget{sim: s, launches: map[attemptKey]int{}, ended: map[attemptKey]targets.Result{}}
}

func (t *simTarget) Launch(ctx context.Context, req targets.Request) targets.Result {
	var sp spec
	if err := json.Unmarshal(req.Spec, &sp); err != nil {
		return targets.Result{Status: targets.Failed, Message: err.Error()}
	}
	if t.sim.crash(ctx, beforeCall, req) {
		return targets.Result{Status: targets.Failed, Message: "the process died before the call"}
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
	res := targets.Result{Status: targets.Succeeded, Message: "done"}
	if t.sim.rng.Float64() < sp.FailRate {
		res = targets.Result{Status: targets.Failed, Message: "simulated failure"}
	}
	if sp.Sync {
		t.mu.Lock()
		t.ended[k] = res
		t.mu.Unlock()
		t.sim.note(req.JobID, "target ran %s#%d within the call: %s", req.Invocation, req.Attempt, statusName[res.Status])
		t.sim.crash(ctx, afterCall, req)
		return res
	}
	t.sim.note(req.JobID, "target started %s#%d, to end in %v", req.Invocation, req.Attempt, sp.Duration.Round(time.Second))
	t.sim.at(t.sim.now.Add(sp.Duration), func() { t.end(req, res) })
	t.sim.crash(ctx, afterCall, req)
	return targets.Result{Status: targets.Running, Message: "accepted"}
}

// statusName names the outcomes in timelines.
var statusName = map[targets.Status]string{targets.Failed: "failed", targets.Succeeded: "succeeded", targets.Running: "running"}

// end reports an attempt's end; a report the store refused is tried again
// a minute later, as a poller would.
func (t *simTarget) end(req targets.Request, res targets.Result) {
	k := attemptKey{req.Key, req.Attempt}
	t.mu.Lock()
	t.ended[k] = res
	t.mu.Unlock()
	ctx, end := inProcess(t.sim.ctx)
	err := t.sim.engine.Report(ctx, req.JobID, req.Invocation, req.Attempt, res)
	end()
	t.sim.note(req.JobID, "target reported %s#%d %s: %s", req.Invocation, req.Attempt, statusName[res.Status], errOrOK(err))
	if err != nil {
		t.sim.at(t.sim.now.Add(time.Minute), func() { t.end(req, res) })
	}
}

func (t *simTarget) Resolve(ctx context.Context, req targets.Request) (bool, targets.Result, error) {
	k := attemptKey{req.Key, req.Attempt}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.launches[k] == 0 {
		return false, targets.Result{}, nil
	}
	if res, ok := t.ended[k]; ok {
		return true, res, nil
	}
	return true, targets.Result{Status: targets.Running}, nil
}

// blindTarget is a simTarget that cannot tell whether a launch happened.
type blindTarget struct{ t *simTarget }

func (b blindTarget) Launch(ctx context.Context, req targets.Request) targets.Result {
	return b.t.Launch(ctx, req)
}
