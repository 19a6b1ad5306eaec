package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// t0 is where every test's clock starts: a Monday, 10:00 UTC.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// harness is the embedded shape on a fake clock: the real SQLite store,
// the real local dispatcher and watchdog, and the engine over them.
type harness struct {
	t    *testing.T
	ctx  context.Context
	clk  *fakeclock.Clock
	path string
	st   *sqlite.Store
	eng  *engine.Engine
	disp *local.Dispatcher
	wd   *watchdog.Watchdog
	tgt  *recorder
}

func newHarness(t *testing.T, opts engine.Options) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), clk: fakeclock.New(t0), path: filepath.Join(t.TempDir(), "sundial.db")}
	h.tgt = newRecorder()
	h.st, h.eng, h.disp = h.open("proc-1", opts)
	h.wd = watchdog.New(h.st, h.eng, watchdog.Options{Now: h.clock})
	return h
}

// open opens another "process" on the harness's database file.
func (h *harness) open(owner string, opts engine.Options) (*sqlite.Store, *engine.Engine, *local.Dispatcher) {
	h.t.Helper()
	st, err := sqlite.Open(h.path, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { st.Close() })
	opts.Now = h.clock
	q := &enginetest.LateQueue{}
	eng := engine.New(st, q, map[string]targets.Target{"rec": h.tgt, "blind": blind{h.tgt}, "sync": synchronous{blind{h.tgt}}}, opts)
	handle := func(ctx context.Context, t task.Task) error {
		ctx, end := inProcess(ctx)
		defer end()
		return eng.HandleTask(ctx, t)
	}
	disp := local.New(st, handle, local.Options{Owner: owner, Workers: 4, OrphanAfter: 10 * time.Second, Now: h.clock, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = disp
	return st, eng, disp
}

func (h *harness) clock() time.Time { return h.clk.Now() }

func (h *harness) set(t time.Time) { h.clk.Set(t) }

// runUntil runs every task due up to until (enginetest.RunUntil).
func (h *harness) runUntil(until time.Time) {
	h.t.Helper()
	if err := enginetest.RunUntil(h.ctx, h.clk, h.st, h.disp, h.wd, until); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) define(id, expr string, p statemachine.Policy, kind string) {
	h.t.Helper()
	if err := h.eng.Define(h.ctx, id, engine.Definition{Schedule: expr, Policy: p, Target: kind}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) job(id string) *store.JobRecord {
	h.t.Helper()
	j, err := h.st.Job(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

func (h *harness) invocations(id string) []*store.InvocationRecord {
	h.t.Helper()
	var all []*store.InvocationRecord
	for p := (store.Page{Limit: 100}); ; {
		invs, next, err := h.st.Invocations(h.ctx, id, p)
		if err != nil {
			h.t.Fatal(err)
		}
		all = append(all, invs...)
		if next == "" {
			return all
		}
		p.Cursor = next
	}
}

// recorder is a target that counts launches by idempotency key and attempt,
// can tell by key whether a launch happened, and can be told to fail or to
// block. Launch checks "write before call" on every call.
type recorder struct {
	mu       sync.Mutex
	launches map[attemptKey]int
	results  map[attemptKey]targets.Result
	// check, if set, is called at every launch before it is counted.
	check func(req targets.Request)
	// crash, if set, is asked after every launch whether the process dies
	// there, before the outcome is recorded (inProcess).
	crash func(req targets.Request) bool
	// crashBefore, if set, is asked at every launch whether the process
	// dies there, before the target is reached: the launch is not made.
	crashBefore func(req targets.Request) bool
	fail        bool
	// resolveErr, if set, is what Resolve returns: the target cannot be
	// asked.
	resolveErr error
}

type attemptKey struct {
	key     string
	attempt int
}

func newRecorder() *recorder {
	return &recorder{launches: map[attemptKey]int{}, results: map[attemptKey]targets.Result{}}
}

func (r *recorder) Launch(ctx context.Context, req targets.Request) targets.Result {
	r.mu.Lock()
	check, crashBefore := r.check, r.crashBefore
	r.mu.Unlock()
	if check != nil {
		check(req)
	}
	if crashBefore != nil && crashBefore(req) {
		die(ctx)
		return targets.Result{}
	}
	r.mu.Lock()
	k := attemptKey{req.Key, req.Attempt}
	r.launches[k]++
	res := targets.Result{Status: targets.Succeeded, Message: "ok"}
	if r.fail {
		res = targets.Result{Status: targets.Failed, Message: "failing as told"}
	}
	r.results[k] = res
	crash := r.crash
	r.mu.Unlock()
	if crash != nil && crash(req) {
		die(ctx)
	}
	return res
}

// processKey holds the function that ends the context of one call into the
// engine, as the death of the process making it would.
type processKey struct{}

// errDied is why a process's context ended.
var errDied = errors.New("the process died")

// inProcess returns ctx as the context of one call into the engine by one
// process, which a target's crash (die) ends; end releases it. An ended
// context is what Dispatcher.Run gives the handlers it stops: the engine
// records nothing more of the call, as a dead process would not.
func inProcess(ctx context.Context) (_ context.Context, end func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	return context.WithValue(ctx, processKey{}, cancel), func() { cancel(nil) }
}

// die ends the process whose call ctx belongs to.
func die(ctx context.Context) {
	cancel, ok := ctx.Value(processKey{}).(context.CancelCauseFunc)
	if !ok {
		panic("a crash outside a process: call the engine with inProcess")
	}
	cancel(errDied)
}

func (r *recorder) Resolve(ctx context.Context, req targets.Request) (bool, targets.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resolveErr != nil {
		return false, targets.Result{}, r.resolveErr
	}
	res, ok := r.results[attemptKey{req.Key, req.Attempt}]
	return ok, res, nil
}

func (r *recorder) count(key string, attempt int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.launches[attemptKey{key, attempt}]
}

// total returns the launches of every key, and the most launches any one
// attempt got.
func (r *recorder) total() (launches, most int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.launches {
		launches += n
		most = max(most, n)
	}
	return launches, most
}

// blind is the recorder without Resolve: it cannot tell whether a launch
// happened.
type blind struct{ r *recorder }

func (b blind) Launch(ctx context.Context, req targets.Request) targets.Result {
	return b.r.Launch(ctx, req)
}

// synchronous is blind declared a target that runs its attempts within
// the call (targets.Synchronous), as url_fetch, command and noop do.
type synchronous struct{ blind }

func (synchronous) RunsWithinCall() {}
