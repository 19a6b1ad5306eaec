package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// testdata/replay/v0.db is a database file that release 313afd2 (the last
// before the stored shapes had versions) wrote with its real engine, SQLite
// store and local dispatcher, from 10:00 to 10:12 UTC on 2 March 2026, on
// the project "replay" below: every5 ran a manual trigger and three
// occurrences, paused was paused, removed and disabled were disabled as its
// config importer did, autodisabled failed twice, running's asynchronous
// target still runs, and retrying waits an hour for its third attempt,
// whose StartInvocation row is queued. Every job's state and definition,
// every invocation record and every task row in it is in version 0.

// replayEnd is where 313afd2's clock stopped.
var replayEnd = time.Date(2026, 3, 2, 10, 12, 0, 0, time.UTC)

// replayConfig is the config 313afd2 ran, as this release's engine takes
// it: the same definitions, removed left out, disabled marked so.
func replayConfig() []engine.Job {
	def := func(expr, kind string, p statemachine.Policy) engine.Definition {
		return engine.Definition{Schedule: expr, Target: kind, Policy: p}
	}
	every5 := engine.Definition{Schedule: "*/5 * * * *", TimeZone: "Europe/Berlin", Gap: "skip", Repeat: "first",
		Policy: statemachine.Policy{Overlap: statemachine.OverlapQueueOne, CatchupWindow: time.Hour, Timeout: time.Minute,
			MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: time.Minute, Idempotent: true},
		// Spelled otherwise than 313afd2 stored it: the same value.
		Target: "ok", Spec: json.RawMessage(`{"a": [true, null], "b": 1.0}`)}
	return []engine.Job{
		{ID: "replay/every5", Definition: every5},
		{ID: "replay/paused", Definition: def("0 * * * *", "ok", statemachine.Policy{})},
		{ID: "replay/disabled", Definition: def("*/5 * * * *", "ok", statemachine.Policy{}), Disabled: true},
		{ID: "replay/autodisabled", Definition: def("*/5 * * * *", "fail", statemachine.Policy{AutoDisableAfter: 2})},
		{ID: "replay/running", Definition: def("*/10 * * * *", "async", statemachine.Policy{Timeout: 2 * time.Hour})},
		{ID: "replay/retrying", Definition: def("*/10 * * * *", "fail", statemachine.Policy{MaxAttempts: 3, MinBackoff: time.Hour, MaxBackoff: time.Hour})},
	}
}

// replayTarget ends each attempt as its kind says, and keeps the specs it
// was given and how many times it launched each attempt.
type replayTarget struct {
	status   targets.Status
	mu       sync.Mutex
	specs    []string
	launches map[string]int // by "<idempotency key> <attempt>"
}

func (r *replayTarget) Launch(_ context.Context, req targets.Request) targets.Result {
	r.mu.Lock()
	r.specs = append(r.specs, string(req.Spec))
	if r.launches == nil {
		r.launches = map[string]int{}
	}
	r.launches[fmt.Sprintf("%s %d", req.Key, req.Attempt)]++
	r.mu.Unlock()
	return targets.Result{Status: r.status, Message: "as told"}
}

// replayTargets are the targets of the kinds replayConfig's jobs name.
type replayTargets struct{ ok, fail, async *replayTarget }

func newReplayTargets() replayTargets {
	return replayTargets{ok: &replayTarget{status: targets.Succeeded}, fail: &replayTarget{status: targets.Failed}, async: &replayTarget{status: targets.Running}}
}

type replay struct {
	t    *testing.T
	ctx  context.Context
	clk  *fakeclock.Clock
	st   *sqlite.Store
	eng  *engine.Engine
	disp *local.Dispatcher
	wd   *watchdog.Watchdog
	replayTargets
}

// copyReplay copies the previous release's database file to a new
// directory and returns the copy's path.
func copyReplay(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "replay", "v0.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sundial.db")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// openReplay opens a copy of the previous release's database file.
func openReplay(t *testing.T) *replay {
	t.Helper()
	return openReplayAt(t, copyReplay(t), fakeclock.New(replayEnd), newReplayTargets(), statemachine.Config{})
}

// openReplayAt runs this release's engine, on clk, over the database at
// path: the replay's database or a copy of it.
func openReplayAt(t *testing.T, path string, clk *fakeclock.Clock, tg replayTargets, cfg statemachine.Config) *replay {
	t.Helper()
	r := &replay{t: t, ctx: context.Background(), clk: clk, replayTargets: tg}
	var err error
	if r.st, err = sqlite.Open(path, sqlite.Options{Synchronous: sqlite.SyncNormal}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.st.Close() })
	q := &enginetest.LateQueue{}
	targets := map[string]targets.Target{"ok": tg.ok, "fail": tg.fail, "async": tg.async}
	r.eng = engine.New(r.st, q, targets, engine.Options{Now: r.clk.Now, Config: cfg})
	r.disp = local.New(r.st, r.eng.HandleTask, local.Options{Owner: "new", Workers: 4, Now: r.clk.Now, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = r.disp
	r.wd = watchdog.New(r.st, r.eng, watchdog.Options{Now: r.clk.Now})
	return r
}

func (r *replay) views() map[string]engine.View {
	r.t.Helper()
	jobs, next, err := r.st.Jobs(r.ctx, "replay", store.Page{Limit: 100})
	if err != nil || next != "" {
		r.t.Fatalf("listing: next %q, err %v", next, err)
	}
	out := map[string]engine.View{}
	for _, j := range jobs {
		v, err := engine.Decode(j)
		if err != nil {
			r.t.Fatalf("a job 313afd2 stored does not decode: %v", err)
		}
		out[j.ID] = v
	}
	return out
}

// records lists every invocation record of the project as "job id status
// attempt", sorted.
func (r *replay) records() []string {
	r.t.Helper()
	var out []string
	for id := range r.views() {
		invs, _, err := r.st.Invocations(r.ctx, id, store.Page{Limit: 100})
		if err != nil {
			r.t.Fatal(err)
		}
		for _, inv := range invs {
			out = append(out, fmt.Sprintf("%s %s %s %d", strings.TrimPrefix(id, "replay/"), inv.ID, inv.Status, inv.Attempt))
		}
	}
	slices.Sort(out)
	return out
}

// namedDefinitions checks that every record of an invocation shows the
// definition of its job (views are the jobs as 313afd2 left them): one
// that 313afd2 wrote holds the bytes, one this release wrote names the
// job's stored bytes. It returns how many name it.
func (r *replay) namedDefinitions(views map[string]engine.View) int {
	r.t.Helper()
	named := 0
	for _, j := range replayConfig() {
		invs, _, err := r.st.Invocations(r.ctx, j.ID, store.Page{Limit: 100})
		if err != nil {
			r.t.Fatal(err)
		}
		for _, inv := range invs {
			if inv.Status == string(statemachine.StatusSkipped) {
				// A record of occurrences that did not run names no
				// definition.
				if _, err := r.eng.InvocationDefinition(r.ctx, inv); err == nil || inv.DefinitionHash != "" || inv.Definition != nil {
					r.t.Errorf("%s %s, skipped, names %q, holds %q, shows one (err %v)", j.ID, inv.ID, inv.DefinitionHash, inv.Definition, err)
				}
				continue
			}
			if def, err := r.eng.InvocationDefinition(r.ctx, inv); err != nil || !def.Equal(&j.Definition) {
				r.t.Errorf("%s %s shows %+v, %v; want %+v", j.ID, inv.ID, def, err, j.Definition)
			}
			if inv.DefinitionHash == "" {
				if len(inv.Definition) == 0 {
					r.t.Errorf("%s %s neither names nor holds its definition", j.ID, inv.ID)
				}
				continue
			}
			named++
			stored, err := r.st.Definition(r.ctx, j.ID, inv.DefinitionHash)
			if err != nil || inv.Definition != nil || string(stored) != string(views[j.ID].Job.Definition) {
				r.t.Errorf("%s %s holds %q and names %q, %v; want it to name the job's %s", j.ID, inv.ID, inv.Definition, stored, err, views[j.ID].Job.Definition)
			}
		}
	}
	return named
}

// TestReplayOfThePreviousReleasesDatabase: the jobs, invocation records and
// task rows that 313afd2 stored read as what they were, and the engine runs
// on them: scheduled jobs fire, the queued retry starts under the
// definition its record holds, and applying the same config redefines
// nothing.
func TestReplayOfThePreviousReleasesDatabase(t *testing.T) {
	r := openReplay(t)
	views := r.views()
	type want struct {
		state  statemachine.State
		reason statemachine.Reason
		active []statemachine.Status
	}
	for id, w := range map[string]want{
		"replay/every5":       {state: statemachine.Scheduled},
		"replay/paused":       {state: statemachine.Paused, reason: statemachine.Reason{Kind: statemachine.ReasonPaused, Note: "paused for the migration"}},
		"replay/removed":      {state: statemachine.Disabled, reason: statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig}},
		"replay/disabled":     {state: statemachine.Disabled, reason: statemachine.Reason{Kind: statemachine.ReasonDisabledInConfig}},
		"replay/autodisabled": {state: statemachine.Disabled, reason: statemachine.Reason{Kind: statemachine.ReasonAutoDisabled, Note: "after 2 failed invocations in a row"}},
		"replay/running":      {state: statemachine.Running, active: []statemachine.Status{statemachine.StatusRunning}},
		"replay/retrying":     {state: statemachine.Queued, active: []statemachine.Status{statemachine.StatusRetrying}},
	} {
		v, ok := views[id]
		if !ok {
			t.Errorf("%s: missing", id)
			continue
		}
		var phases []statemachine.Status
		for _, inv := range v.State.Active {
			phases = append(phases, inv.Status)
		}
		if v.State.State != w.state || v.State.Reason != w.reason || !slices.Equal(phases, w.active) {
			t.Errorf("%s: %s %+v active %v; want %s %+v active %v", id, v.State.State, v.State.Reason, phases, w.state, w.reason, w.active)
		}
	}
	if len(views) != 7 {
		t.Errorf("%d jobs, want 7", len(views))
	}
	for _, j := range replayConfig() {
		if v := views[j.ID]; !v.Definition.Equal(&j.Definition) {
			t.Errorf("%s: stored definition reads as %+v, want %+v", j.ID, v.Definition, j.Definition)
		}
	}
	oldRecords := []string{
		"autodisabled 20260302T100500Z FAILED 1",
		"autodisabled 20260302T101000Z FAILED 1",
		"every5 20260302T100500Z SUCCEEDED 1",
		"every5 20260302T101000Z SUCCEEDED 1",
		"every5 manual-1 SUCCEEDED 1",
		"retrying 20260302T101000Z RETRYING 2",
		"running 20260302T101000Z RUNNING 1",
	}
	if got := r.records(); !slices.Equal(got, oldRecords) {
		t.Errorf("records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(oldRecords, "\n"))
	}
	if n := r.namedDefinitions(views); n != 0 {
		t.Errorf("%d records of 313afd2 name their definition, want none", n)
	}

	// The first config refresh after the upgrade.
	if err := r.eng.ApplyProject(r.ctx, "replay", engine.Revision{ID: "r1", Jobs: replayConfig()}); err != nil {
		t.Fatal(err)
	}
	after := r.views()
	for id, v := range views {
		a := after[id]
		if string(a.Job.Definition) != string(v.Job.Definition) || a.State.TickNonce != v.State.TickNonce ||
			!a.State.NextAt.Equal(v.State.NextAt) || a.State.State != v.State.State || a.State.Reason != v.State.Reason ||
			!slices.EqualFunc(a.State.Active, v.State.Active, func(x, y statemachine.Invocation) bool { return x.Nonce == y.Nonce && x.Status == y.Status }) {
			t.Errorf("%s: the same config redefined it:\n%+v %s\nbecame\n%+v %s", id, v.State, v.Job.Definition, a.State, a.Job.Definition)
		}
	}
	if got := r.records(); !slices.Equal(got, oldRecords) {
		t.Errorf("the same config wrote records:\n%s", strings.Join(got, "\n"))
	}

	// An hour on: every5 fires every five minutes, retrying's queued start
	// runs its second attempt, running's target reports its end.
	if err := enginetest.RunUntil(r.ctx, r.clk, r.st, r.disp, r.wd, replayEnd.Add(64*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := r.eng.Report(r.ctx, "replay/running", "20260302T101000Z", 1, targets.Result{Status: targets.Succeeded}); err != nil {
		t.Fatal(err)
	}
	got := r.records()
	for _, w := range []string{
		"every5 20260302T101500Z SUCCEEDED 1",
		"every5 20260302T111500Z SUCCEEDED 1",
		"retrying 20260302T101000Z RETRYING 3", // its queued second attempt ran and failed
		"running 20260302T101000Z SUCCEEDED 1",
	} {
		if !slices.Contains(got, w) {
			t.Errorf("no record %q after an hour:\n%s", w, strings.Join(got, "\n"))
		}
	}
	fired := 0
	for _, g := range got {
		if strings.HasPrefix(g, "every5 2026") && strings.HasSuffix(g, "SUCCEEDED 1") {
			fired++
		}
	}
	if fired != 2+13 { // 10:05 and 10:10 before, 10:15 to 11:15 after
		t.Errorf("every5 ran %d scheduled occurrences, want 15:\n%s", fired, strings.Join(got, "\n"))
	}
	if n := r.namedDefinitions(views); n == 0 {
		t.Errorf("no record this release wrote names its definition")
	}
	for _, spec := range r.ok.specs {
		if spec != `{"b":1,"a":[true,null]}` {
			t.Errorf("every5's target got spec %s, want the one 313afd2 stored", spec)
		}
	}
	for id, v := range r.views() {
		if st := v.State.State; (id == "replay/paused") != (st == statemachine.Paused) || (strings.Contains(id, "disabled") || id == "replay/removed") != (st == statemachine.Disabled) {
			t.Errorf("%s is %s after an hour", id, st)
		}
	}
}
