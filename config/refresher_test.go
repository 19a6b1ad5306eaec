package config_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
)

const (
	scheduled = "SCHEDULED"
	disabled  = "DISABLED"
)

func (e *env) wantState(id, state, reason string) {
	e.t.Helper()
	if s, r := e.state(id); s != state || r != reason {
		e.t.Errorf("job %s is %s (%q), want %s (%q)", id, s, r, state, reason)
	}
}

func (e *env) wantNoJob(id string) {
	e.t.Helper()
	if _, err := e.st.Job(e.ctx, id); !errors.Is(err, store.ErrNotFound) {
		e.t.Errorf("job %s: %v, want it not to exist", id, err)
	}
}

func (e *env) status(project string) config.Status {
	e.t.Helper()
	s, ok, err := e.fresh.ProjectStatus(e.ctx, project)
	if err != nil {
		e.t.Fatal(err)
	}
	if !ok {
		e.t.Fatalf("no status for project %s", project)
	}
	return s
}

func TestRefreshDefinesChangesAndDisablesJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("billing.yaml", `jobs:
  - id: report
    schedule: "@hourly"
    noop: {}
  - id: rotate
    schedule: "0 4 * * *"
    command: {argv: [date]}
  - id: later
    schedule: "@daily"
    disabled: true
    noop: {}
`)
	e.refresh()
	e.wantState("billing/report", scheduled, "")
	e.wantState("billing/rotate", scheduled, "")
	e.wantNoJob("billing/later") // disabled before it ever ran: not created
	if d := e.definition("billing/rotate"); d.Target != "command" || string(d.Spec) != `{"argv":["date"]}` {
		t.Errorf("rotate's definition is %+v", d)
	}

	e.advance(time.Minute)
	e.write("billing.yaml", `jobs:
  - id: report
    schedule: "@every 10m"
    noop: {}
  - id: later
    schedule: "@daily"
    noop: {}
`)
	e.refresh()
	if d := e.definition("billing/report"); d.Schedule != "@every 10m" {
		t.Errorf("report's schedule is %q, want the new one", d.Schedule)
	}
	e.wantState("billing/report", scheduled, "")
	e.wantState("billing/rotate", disabled, "removed from config")
	e.wantState("billing/later", scheduled, "")

	e.write("billing.yaml", `jobs:
  - id: report
    schedule: "@every 10m"
    disabled: true
    noop: {}
  - id: later
    schedule: "@daily"
    noop: {}
  - id: rotate
    schedule: "0 4 * * *"
    command: {argv: [date]}
`)
	e.refresh()
	e.wantState("billing/report", disabled, "disabled in config")
	e.wantState("billing/rotate", scheduled, "") // back in config, same definition

	e.write("billing.yaml", `jobs:
  - id: report
    schedule: "@every 10m"
    noop: {}
`)
	e.refresh()
	e.wantState("billing/report", scheduled, "") // enabled again, same definition
	e.wantState("billing/later", disabled, "removed from config")
	e.wantState("billing/rotate", disabled, "removed from config")
	if s := e.status("billing"); s.Error != "" || s.Jobs != 1 || s.LoadedAt != t0.Add(time.Minute) {
		t.Errorf("status %+v, want no error, 1 job, loaded at %s", s, t0.Add(time.Minute))
	}
}

func TestRefreshLeavesAnAutoDisabledJobAloneUntilItsDefinitionChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const flaky = "  - id: flaky\n    schedule: triggered\n    auto_disable_after: 1\n    noop: {fail: true}\n"
	e.write("ops.yaml", "jobs:\n"+flaky)
	e.refresh()
	if _, err := e.eng.Trigger(e.ctx, "ops/flaky", "user:tester@example.com"); err != nil {
		t.Fatal(err)
	}
	e.runDue()
	s, reason := e.state("ops/flaky")
	if s != disabled || !strings.Contains(reason, "auto-disabled") {
		t.Fatalf("flaky is %s (%q), want auto-disabled", s, reason)
	}

	e.write("ops.yaml", "jobs:\n"+flaky+"  - id: other\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()
	e.wantState("ops/flaky", disabled, reason)
	e.wantState("ops/other", scheduled, "")

	e.write("ops.yaml", "jobs:\n"+strings.Replace(flaky, "fail: true", "fail: false", 1))
	e.refresh()
	e.wantState("ops/flaky", scheduled, "")
}

func TestRefreshKeepsTheLastGoodRevisionOfAnInvalidProjectAndAppliesTheOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n"
	e.write("billing.yaml", good)
	e.write("ops.yaml", "jobs:\n  - id: ping\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()
	first := e.status("billing")

	e.advance(time.Minute)
	e.write("billing.yaml", `jobs:
  - id: report
    schedule: "@every 5m"
    noop: {}
  - id: new
    schedule: "@hourly"
    noop: {}
  - id: broken
    schedule: "@hourly"
    time_zone: Nowhere/Land
    noop: {}
`)
	e.write("ops.yaml", "jobs:\n  - id: ping\n    schedule: \"@every 5m\"\n    noop: {}\n  - id: pong\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()

	if d := e.definition("billing/report"); d.Schedule != "@hourly" {
		t.Errorf("billing/report runs %q, want the last good revision's @hourly", d.Schedule)
	}
	e.wantNoJob("billing/new")
	s := e.status("billing")
	if s.Revision != first.Revision || s.LoadedAt != first.LoadedAt || s.Jobs != 1 {
		t.Errorf("status %+v, want the last good revision %s loaded at %s", s, first.Revision, first.LoadedAt)
	}
	wantErr := filepath.Join(e.dir, "billing.yaml") + ":10: jobs[2].time_zone: unknown time zone"
	if !strings.HasPrefix(s.Error, wantErr) || s.ErrorAt != t0.Add(time.Minute) {
		t.Errorf("status error %q at %s, want %q at %s", s.Error, s.ErrorAt, wantErr, t0.Add(time.Minute))
	}

	if d := e.definition("ops/ping"); d.Schedule != "@every 5m" {
		t.Errorf("ops/ping runs %q, want the new revision's", d.Schedule)
	}
	e.wantState("ops/pong", scheduled, "")
	if s := e.status("ops"); s.Error != "" || s.Jobs != 2 {
		t.Errorf("ops status %+v, want its new revision running", s)
	}

	e.advance(time.Minute)
	e.write("billing.yaml", good+"  - id: new\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()
	e.wantState("billing/new", scheduled, "")
	if s := e.status("billing"); s.Error != "" || s.Jobs != 2 || s.LoadedAt != t0.Add(2*time.Minute) {
		t.Errorf("status %+v, want the fixed revision running and no error", s)
	}
}

func TestRefreshSkipsFilesWhoseBytesDidNotChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.write("broken.yaml", "jobs: {}\n")
	e.refresh()
	if n := e.st.timesListed("billing"); n != 1 {
		t.Fatalf("billing listed %d times by the first refresh, want 1", n)
	}
	brokenAt := e.status("broken").ErrorAt

	e.advance(time.Minute)
	// The same bytes written again: a new modification time, nothing new.
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()
	e.refresh()
	if n := e.st.timesListed("billing"); n != 1 {
		t.Errorf("billing synced %d times, want once: its bytes never changed", n)
	}
	if s := e.status("broken"); s.ErrorAt != brokenAt {
		t.Errorf("broken's error is from %s, want it left from %s: its bytes never changed", s.ErrorAt, brokenAt)
	}

	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@daily\"\n    noop: {}\n")
	e.refresh()
	if n := e.st.timesListed("billing"); n != 2 {
		t.Errorf("billing synced %d times, want twice after a change", n)
	}
}

func TestRefreshDisablesTheJobsOfARemovedFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.write("ops.yaml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n  - id: b\n    schedule: \"@daily\"\n    noop: {}\n")
	e.refresh()
	e.remove("ops.yaml")
	e.refresh()
	e.wantState("ops/a", disabled, "removed from config")
	e.wantState("ops/b", disabled, "removed from config")
	e.wantState("billing/report", scheduled, "")
	if _, ok, _ := e.fresh.ProjectStatus(e.ctx, "ops"); ok {
		t.Error("ops still has a status after its file went")
	}
	if got, _ := e.fresh.Status(e.ctx); len(got) != 1 || got[0].Project != "billing" {
		t.Errorf("statuses %+v, want billing's alone", got)
	}
}

func TestRefreshAfterARestartDisablesProjectsWhoseFilesWentWhileDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.write("ops.yaml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()
	e.remove("ops.yaml")
	e.fresh = e.refresher(nil) // a new process
	e.refresh()
	e.wantState("ops/a", disabled, "removed from config")
	e.wantState("billing/report", scheduled, "")
}

func TestRefreshOfAnUnreadableDirectoryChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()
	if err := os.Rename(e.dir, e.dir+"-gone"); err != nil {
		t.Fatal(err)
	}
	if err := e.fresh.Refresh(e.ctx); err == nil || !strings.Contains(err.Error(), "reading the config directory") {
		t.Errorf("Refresh: %v, want an error about the directory", err)
	}
	e.wantState("billing/report", scheduled, "")
	if s := e.status("billing"); s.Error != "" {
		t.Errorf("status %+v, want it as it was", s)
	}
}

func TestRefreshReportsTwoFilesForOneProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	e.refresh()
	e.write("billing.yml", "jobs: []\n")
	e.refresh()
	e.wantState("billing/report", scheduled, "")
	if s := e.status("billing"); !strings.Contains(s.Error, "project billing has 2 config files here (billing.yaml and billing.yml)") {
		t.Errorf("status error %q, want it to name both files", s.Error)
	}
	e.remove("billing.yml")
	e.refresh()
	if s := e.status("billing"); s.Error != "" {
		t.Errorf("status error %q after the second file went, want none", s.Error)
	}
}

func TestReadDirSkipsWhatIsNotAConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a.yaml", "b.yml", "README.md", ".hidden.yaml", "c.yaml.bak"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("jobs: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := config.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Project)
		if f.Err != nil {
			t.Errorf("%s: %v", f.Path, f.Err)
		}
	}
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("projects %v, want a and b", got)
	}
}

func TestRunRefreshesAtEachTickAndStopsWhenTheTickerCloses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tick := make(chan time.Time)
	r := e.refresher(tick)
	done := make(chan struct{})
	go func() {
		if err := r.Run(context.Background()); err != nil {
			t.Errorf("Run: %v", err)
		}
		close(done)
	}()
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"@hourly\"\n    noop: {}\n")
	tick <- t0
	close(tick)
	<-done
	e.wantState("billing/report", scheduled, "")
}

// gate is a target whose Check waits until it is opened: a project that
// uses it (as its command target) is one whose apply takes as long as the
// test wants (a project of 100,000 jobs, say).
type gate struct{ open chan struct{} }

func (gate) Launch(context.Context, targets.Request) targets.Result {
	return targets.Result{Status: targets.Succeeded}
}

func (g gate) Check(json.RawMessage) error {
	<-g.open
	return nil
}

// A project whose apply is slow holds no other project up: neither the
// projects read in the same pass, nor a later pass that brings an edit of
// another project, which Run makes while the slow apply goes on.
func TestASlowProjectHoldsNoOtherProjectUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	slow := gate{open: make(chan struct{})}
	e.tgts["command"] = slow
	tick := make(chan time.Time)
	r := e.refresher(tick)
	// "big" is read first: the directory is read in name order.
	e.write("big.yaml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    command: {argv: [date]}\n")
	e.write("small.yaml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n")
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		r.Run(ctx)
		close(done)
	}()
	waitFor(t, "small/a to be applied while big is still being applied", func() bool {
		_, ok, _ := r.ProjectStatus(e.ctx, "small")
		return ok
	})
	e.write("small.yaml", "jobs:\n  - id: a\n    schedule: \"@daily\"\n    noop: {}\n")
	waitFor(t, "small's edit to be applied while big is still being applied", func() bool {
		// Ticks until a pass takes the edit: small's status is written
		// inside its apply, and a pass that comes before that apply has
		// ended leaves small to it, as it leaves big.
		select {
		case tick <- t0:
		default:
		}
		s, _, _ := r.ProjectStatus(e.ctx, "small")
		return s.Revision != "" && e.definition("small/a").Schedule == "@daily"
	})
	if s, ok, _ := r.ProjectStatus(e.ctx, "big"); ok {
		t.Fatalf("big has a status before its apply could end: %+v", s)
	}
	close(slow.open)
	waitFor(t, "big to be applied once it may", func() bool {
		_, ok, _ := r.ProjectStatus(e.ctx, "big")
		return ok
	})
	e.wantState("big/a", scheduled, "")
	close(tick)
	<-done
}

// waitFor polls cond until it holds, for what another goroutine does; it
// fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// At most RefresherOptions.ParseBudget bytes of config are parsed at once,
// so a directory of big files cannot take the parser's hundredfold memory
// for all of them together.
func TestRefreshParsesWithinItsBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	slow := &countingGate{gate: gate{open: make(chan struct{})}}
	e.tgts["command"] = slow
	file := "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    command: {argv: [date]}\n"
	e.write("one.yaml", file)
	e.write("two.yaml", file)
	r := config.NewRefresher(e.dir, e.eng, e.st, config.RefresherOptions{
		Targets: e.tgts, Now: e.clock, ParseBudget: int64(len(file)) + 10,
	})
	done := make(chan error)
	go func() { done <- r.Refresh(e.ctx) }()
	waitFor(t, "a parse to start", func() bool { return slow.calls() >= 1 })
	// Give the other apply every chance to start parsing beside it.
	time.Sleep(100 * time.Millisecond)
	if n := slow.calls(); n != 1 {
		t.Fatalf("%d files parsed at once within a budget of one", n)
	}
	close(slow.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := slow.calls(); n != 2 {
		t.Errorf("%d files parsed; want both", n)
	}
}

// A file's weight against the parse budget follows its YAML items, not
// only its bytes (issue 36, finding 8): two small files of one-character
// items, each costing to parse what a big file costs, are not parsed side
// by side within a budget that holds both their bytes.
func TestRefreshWeighsDenseFilesByTheirItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	slow := &countingGate{gate: gate{open: make(chan struct{})}}
	e.tgts["command"] = slow
	file := "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    command: {argv: [" + strings.Repeat("a,", 4000) + "a]}\n"
	e.write("one.yaml", file)
	e.write("two.yaml", file)
	r := config.NewRefresher(e.dir, e.eng, e.st, config.RefresherOptions{
		Targets: e.tgts, Now: e.clock, ParseBudget: 3 * int64(len(file)),
	})
	done := make(chan error)
	go func() { done <- r.Refresh(e.ctx) }()
	waitFor(t, "a parse to start", func() bool { return slow.calls() >= 1 })
	// Give the other apply every chance to start parsing beside it.
	time.Sleep(100 * time.Millisecond)
	if n := slow.calls(); n != 1 {
		t.Fatalf("%d dense files parsed at once within a budget of three times their bytes", n)
	}
	close(slow.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// countingGate is a gate that counts its Checks.
type countingGate struct {
	gate
	mu sync.Mutex
	n  int
}

func (g *countingGate) Check(spec json.RawMessage) error {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	return g.gate.Check(spec)
}

func (g *countingGate) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}
