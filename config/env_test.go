package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
)

// t0 is where every test's clock starts: a Monday, 10:00 UTC.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// specChecker stands in for targets/urlfetch and targets/command, which are
// written alongside this package: it checks only that a spec has the field
// names agreed with them, so these tests pin those names down.
type specChecker struct{ fields any }

func (specChecker) Launch(context.Context, targets.Request) targets.Result {
	return targets.Result{Status: targets.Succeeded}
}

func (c specChecker) Check(spec json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.DisallowUnknownFields()
	// A value of its own: projects are applied side by side, so Check is
	// called from several goroutines at once.
	v := reflect.New(reflect.TypeOf(c.fields).Elem()).Interface()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad spec: %v", err)
	}
	return nil
}

type urlFetchSpec struct {
	URL          string            `json:"url"`
	Method       string            `json:"method"`
	Headers      map[string]string `json:"headers"`
	Body         string            `json:"body"`
	SuccessCodes []int             `json:"success_codes"`
}

type commandSpec struct {
	Argv        []string          `json:"argv"`
	Shell       any               `json:"shell"`
	Dir         string            `json:"dir"`
	Env         map[string]string `json:"env"`
	MaxMemoryMB int               `json:"max_memory_mb"`
}

// allTargets are the kinds a server with commands enabled runs.
func allTargets() map[string]targets.Target {
	return map[string]targets.Target{
		"noop":      noop.Target{},
		"url_fetch": specChecker{&urlFetchSpec{}},
		"command":   specChecker{&commandSpec{}},
	}
}

// env is the embedded shape on a fake clock: the real SQLite store, the
// real local dispatcher (run only when a test asks: most look at
// definitions and states, not launches) and the engine over them, with a
// config directory.
type env struct {
	t     *testing.T
	ctx   context.Context
	dir   string
	st    *countingStore
	eng   *engine.Engine
	disp  *local.Dispatcher
	clk   *fakeclock.Clock
	tgts  map[string]targets.Target
	fresh *config.Refresher
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), dir: t.TempDir(), clk: fakeclock.New(t0), tgts: allTargets()}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var eng *engine.Engine
	disp := local.New(st, func(ctx context.Context, tk task.Task) error { return eng.HandleTask(ctx, tk) }, local.Options{Now: e.clock})
	e.st = &countingStore{Store: st, listed: map[string]int{}}
	eng = engine.New(e.st, disp, e.tgts, engine.Options{Now: e.clock})
	e.eng, e.disp = eng, disp
	e.fresh = e.refresher(nil)
	return e
}

// refresher returns a refresher of the env's directory, as a new process
// would start it.
func (e *env) refresher(ticks <-chan time.Time) *config.Refresher {
	return config.NewRefresher(e.dir, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock, Ticks: ticks})
}

func (e *env) clock() time.Time { return e.clk.Now() }

func (e *env) advance(d time.Duration) { e.clk.Advance(d) }

// write puts a config file in the directory.
// write replaces the file whole, as a rename does: a refresh running
// meanwhile reads the old bytes or the new, never half of them.
func (e *env) write(name, content string) {
	e.t.Helper()
	tmp := filepath.Join(e.t.TempDir(), name)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.dir, name)); err != nil {
		e.t.Fatal(err)
	}
}

// runDue runs the tasks due now.
func (e *env) runDue() {
	e.t.Helper()
	if _, _, _, err := e.disp.RunDue(e.ctx, e.clock()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) remove(name string) {
	e.t.Helper()
	if err := os.Remove(filepath.Join(e.dir, name)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) refresh() {
	e.t.Helper()
	if err := e.fresh.Refresh(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) job(id string) *store.JobRecord {
	e.t.Helper()
	j, err := e.st.Job(e.ctx, id)
	if err != nil {
		e.t.Fatalf("job %s: %v", id, err)
	}
	return j
}

// definition returns the job's stored definition.
func (e *env) definition(id string) engine.Definition {
	e.t.Helper()
	v, err := engine.Decode(e.job(id))
	if err != nil {
		e.t.Fatal(err)
	}
	return v.Definition
}

// state returns the job's state and the reason for it.
func (e *env) state(id string) (string, string) {
	e.t.Helper()
	m, err := engine.State(e.job(id))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(m.State), m.Reason.String()
}

// countingStore is the real store, counting how often each project's jobs
// were listed: a project that is synced lists its jobs first.
type countingStore struct {
	store.Store
	mu     sync.Mutex
	listed map[string]int
}

func (c *countingStore) Jobs(ctx context.Context, project string, p store.Page) ([]*store.JobRecord, string, error) {
	if p.Cursor == "" {
		c.mu.Lock()
		c.listed[project]++
		c.mu.Unlock()
	}
	return c.Store.Jobs(ctx, project, p)
}

func (c *countingStore) timesListed(project string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listed[project]
}
