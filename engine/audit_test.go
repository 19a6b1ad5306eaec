package engine_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

const (
	alice access.Identity = "user:alice@example.com"
	bob   access.Identity = "serviceAccount:ci@proj.iam.gserviceaccount.com"
)

func (h *harness) audit(id string) []engine.AuditEntry {
	h.t.Helper()
	v, err := h.eng.View(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return v.Audit
}

func TestEveryChangeIsAuditedWithWhoWhenWhatAndWhy(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "@every 1h", statemachine.Policy{}, "rec")

	id, err := h.eng.Trigger(h.ctx, "p/job", alice)
	if err != nil {
		t.Fatal(err)
	}
	h.set(t0.Add(time.Second))
	if err := h.eng.Abort(h.ctx, "p/job", id, bob); err != nil {
		t.Fatal(err)
	}
	h.set(t0.Add(2 * time.Second))
	if err := h.eng.Pause(h.ctx, "p/job", bob, "the database migrates"); err != nil {
		t.Fatal(err)
	}
	// Changes nothing, so records nothing.
	if err := h.eng.Pause(h.ctx, "p/job", alice, "the database migrates"); err != nil {
		t.Fatal(err)
	}
	// A new reason replaces the old one, and is recorded.
	if err := h.eng.Pause(h.ctx, "p/job", alice, "again"); err != nil {
		t.Fatal(err)
	}
	h.set(t0.Add(3 * time.Second))
	if err := h.eng.Resume(h.ctx, "p/job", alice); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Resume(h.ctx, "p/job", bob); err != nil {
		t.Fatal(err)
	}
	want := []engine.AuditEntry{
		{At: t0.Add(3 * time.Second), By: alice, Action: engine.ActionResume},
		{At: t0.Add(2 * time.Second), By: alice, Action: engine.ActionPause, Reason: "again"},
		{At: t0.Add(2 * time.Second), By: bob, Action: engine.ActionPause, Reason: "the database migrates"},
		{At: t0.Add(time.Second), By: bob, Action: engine.ActionAbort, Invocation: id},
		{At: t0, By: alice, Action: engine.ActionTrigger, Invocation: id},
	}
	got := h.audit("p/job")
	for i := range got {
		got[i].At = got[i].At.UTC()
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit:\n%+v\nwant\n%+v", got, want)
	}
	if inv := h.invocation("p/job", id); inv.TriggeredBy != string(alice) {
		t.Errorf("the manual invocation's TriggeredBy is %q, want %q", inv.TriggeredBy, alice)
	}
}

// TestAQueuedTriggerNamesWhoAskedWhenItIsRecordedLater: a trigger that
// waits behind a running invocation (queue_one) gets its record in a later
// transaction, which finds who asked in the trail; one skipped as an
// overrun names them too.
func TestAQueuedTriggerNamesWhoAskedWhenItIsRecordedLater(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/queue", "@every 1h", statemachine.Policy{Overlap: statemachine.OverlapQueueOne}, "rec")
	h.define("p/skip", "@every 1h", statemachine.Policy{Overlap: statemachine.OverlapSkip}, "rec")
	for _, job := range []string{"p/queue", "p/skip"} {
		if _, err := h.eng.Trigger(h.ctx, job, bob); err != nil {
			t.Fatal(err)
		}
		if _, err := h.eng.Trigger(h.ctx, job, alice); err != nil {
			t.Fatal(err)
		}
	}
	if inv := h.invocation("p/skip", "manual-2"); inv.Status != string(statemachine.StatusSkipped) || inv.TriggeredBy != string(alice) {
		t.Errorf("the overrun trigger is %s by %q; want SKIPPED by %s", inv.Status, inv.TriggeredBy, alice)
	}
	h.runUntil(t0.Add(time.Minute))
	for id, by := range map[string]access.Identity{"manual-1": bob, "manual-2": alice} {
		if inv := h.invocation("p/queue", id); inv.Status != string(statemachine.StatusSucceeded) || inv.TriggeredBy != string(by) {
			t.Errorf("p/queue %s is %s by %q; want SUCCEEDED by %s", id, inv.Status, inv.TriggeredBy, by)
		}
	}
}

func TestTheAuditTrailKeepsTheNewestEntries(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "@every 1h", statemachine.Policy{}, "rec")
	for i := range engine.MaxAudit + 5 {
		h.set(t0.Add(time.Duration(i) * time.Second))
		if err := h.eng.Pause(h.ctx, "p/job", alice, fmt.Sprint("pause ", i)); err != nil {
			t.Fatal(err)
		}
		if err := h.eng.Resume(h.ctx, "p/job", bob); err != nil {
			t.Fatal(err)
		}
	}
	got := h.audit("p/job")
	if len(got) != engine.MaxAudit {
		t.Fatalf("%d audit entries, want %d", len(got), engine.MaxAudit)
	}
	if last := got[len(got)-1]; last.Reason != fmt.Sprint("pause ", 15) {
		t.Errorf("the oldest entry kept is %+v; want pause 15 (the 20 newest of 50 entries)", last)
	}
	if got[0].Action != engine.ActionResume || got[1].Reason != fmt.Sprint("pause ", engine.MaxAudit+4) {
		t.Errorf("the newest entries are %+v, %+v", got[0], got[1])
	}
}

func TestARefusedRequestIsNotAudited(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "@every 1h", statemachine.Policy{}, "rec")
	if err := h.eng.Disable(h.ctx, "p/job", statemachine.Reason{Kind: statemachine.ReasonDisabledInConfig}); err != nil {
		t.Fatal(err)
	}
	before := h.job("p/job")
	if _, err := h.eng.Trigger(h.ctx, "p/job", alice); !errors.Is(err, statemachine.ErrRefused) {
		t.Fatalf("Trigger of a disabled job: %v; want ErrRefused", err)
	}
	if err := h.eng.Abort(h.ctx, "p/job", "manual-9", alice); !errors.Is(err, statemachine.ErrRefused) {
		t.Fatalf("Abort of an invocation that does not exist: %v; want ErrRefused", err)
	}
	if after := h.job("p/job"); string(after.EncodedState) != string(before.EncodedState) || len(h.audit("p/job")) != 0 {
		t.Errorf("refused requests changed the job: %s -> %s", before.EncodedState, after.EncodedState)
	}
}

func TestApplyProjectRecordsItsGrantsOnlyOnceAppliedWhole(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "@every 1h", Target: "rec"}
	grants := []access.RoleGrant{{Role: access.Owner, Members: []access.Member{access.Member(alice)}}, {Role: access.Reader, Members: []access.Member{"group:sre"}, Jobs: []string{"a"}}}
	if p, ok, err := h.eng.Project(h.ctx, "p"); err != nil || ok || p.Grants != nil {
		t.Fatalf("a project never applied: %+v, %v, %v; want no record", p, ok, err)
	}
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r1", Jobs: []engine.Job{{ID: "p/a", Definition: def}}, Grants: grants}); err != nil {
		t.Fatal(err)
	}
	want := engine.Project{ID: "p", Revision: "r1", AppliedAt: t0, Grants: grants, Jobs: 1, Changes: &engine.Changes{Added: []string{"a"}, AddedCount: 1}}
	p, ok, err := h.eng.Project(h.ctx, "p")
	p.AppliedAt = p.AppliedAt.UTC()
	if err != nil || !ok || !reflect.DeepEqual(p, want) {
		t.Fatalf("after r1: %+v, %v, %v; want %+v", p, ok, err, want)
	}
	// r2 fails in part: the grants of r1 stay in force.
	err = h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r2", Jobs: []engine.Job{{ID: "q/stolen", Definition: def}}, Grants: []access.RoleGrant{{Role: access.Owner, Members: []access.Member{"anonymous"}}}})
	if err == nil {
		t.Fatal("a revision with another project's job applied")
	}
	p, _, _ = h.eng.Project(h.ctx, "p")
	if p.Revision != "r1" || !reflect.DeepEqual(p.Grants, grants) {
		t.Errorf("after a revision applied in part: %+v; want r1's grants", p)
	}
	all, err := h.eng.Projects(h.ctx)
	if err != nil || len(all) != 1 || all["p"].Revision != "r1" {
		t.Errorf("Projects = %+v, %v; want p at r1", all, err)
	}
	// The config gone: no revision, no grants.
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{}); err != nil {
		t.Fatal(err)
	}
	if p, ok, _ := h.eng.Project(h.ctx, "p"); !ok || p.Revision != "" || p.Grants != nil {
		t.Errorf("after the config is gone: %+v; want a record with no revision or grants", p)
	}
}

// TestApplyProjectRecordsWhatItChanged: the record keeps the jobs the
// revision applied last added, changed and removed (one listed as
// disabled counts as removed), each list bounded with its whole count;
// applying the revision running again keeps them, and a revision that
// changes nothing records empty changes.
func TestApplyProjectRecordsWhatItChanged(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "@every 1h", Target: "rec"}
	changes := func() *engine.Changes {
		t.Helper()
		p, _, err := h.eng.Project(h.ctx, "p")
		if err != nil || p.Changes == nil {
			t.Fatalf("the record: %+v, %v; want its changes", p, err)
		}
		return p.Changes
	}
	jobs := func(names ...string) []engine.Job {
		var out []engine.Job
		for _, n := range names {
			out = append(out, engine.Job{ID: "p/" + n, Definition: def})
		}
		return out
	}
	many := make([]string, engine.MaxChanges+10)
	for i := range many {
		many[i] = fmt.Sprintf("j%03d", i)
	}
	r1 := append(jobs(many...), jobs("a", "b", "c")...)
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r1", Jobs: r1}); err != nil {
		t.Fatal(err)
	}
	if c := changes(); len(c.Added) != engine.MaxChanges || c.AddedCount != len(r1) || c.Added[0] != "j000" || c.ChangedCount+c.RemovedCount != 0 {
		t.Errorf("r1 adds %d jobs; its changes: %d listed of %d added, first %q, %d changed, %d removed", len(r1), len(c.Added), c.AddedCount, c.Added[0], c.ChangedCount, c.RemovedCount)
	}

	// r2 changes a, disables b, drops c and the many, adds d.
	r2 := jobs("a", "b", "d")
	r2[0].Definition.Schedule = "@every 2h"
	r2[1].Disabled = true
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r2", Jobs: r2}); err != nil {
		t.Fatal(err)
	}
	removed := append([]string{"b", "c"}, many[:engine.MaxChanges-2]...)
	// The changed job's definition before is the one r1 stored.
	before := changes().Before["a"]
	if was, err := h.st.Definition(h.ctx, "p/a", before); err != nil || !strings.Contains(string(was), `"@every 1h"`) {
		t.Errorf("a's definition before r2 (%q): %s, %v; want r1's, @every 1h", before, was, err)
	}
	want := &engine.Changes{Added: []string{"d"}, AddedCount: 1, Changed: []string{"a"}, ChangedCount: 1, Removed: removed, RemovedCount: len(many) + 2,
		Before: map[string]string{"a": before}}
	if c := changes(); !reflect.DeepEqual(c, want) {
		t.Errorf("r2's changes: %+v; want %+v", c, want)
	}
	// A refresh applies r2 again: what r2 changed stays.
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r2", Jobs: r2}); err != nil {
		t.Fatal(err)
	}
	if c := changes(); !reflect.DeepEqual(c, want) {
		t.Errorf("r2 applied again: changes %+v; want r2's, %+v", c, want)
	}
	// r3 is r2 under another name: it changes nothing.
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r3", Jobs: r2}); err != nil {
		t.Fatal(err)
	}
	if c := changes(); !reflect.DeepEqual(c, &engine.Changes{}) {
		t.Errorf("r3, which changes nothing: changes %+v; want none", c)
	}
}

// TestRecordConfigErrorKeepsTheRunningRevision: a refused revision's
// error goes into the record beside the revision running, its grants and
// when it was applied; the next revision applied clears it.
func TestRecordConfigErrorKeepsTheRunningRevision(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "@every 1h", Target: "rec"}
	grants := []access.RoleGrant{{Role: access.Owner, Members: []access.Member{access.Member(alice)}}}
	// A project whose first revision is refused has a record all the same.
	if err := h.eng.RecordConfigError(h.ctx, "p", "configs/p.yaml", "configs/p.yaml:1: not YAML", t0, nil); err != nil {
		t.Fatal(err)
	}
	p, ok, err := h.eng.Project(h.ctx, "p")
	if err != nil || !ok || p.Revision != "" || p.Error != "configs/p.yaml:1: not YAML" || !p.ErrorAt.Equal(t0) || p.File != "configs/p.yaml" || !p.HasConfig() {
		t.Fatalf("after a first revision refused: %+v, %v, %v", p, ok, err)
	}
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r1", File: "configs/p.yaml", Jobs: []engine.Job{{ID: "p/a", Definition: def}, {ID: "p/b", Definition: def}}, Grants: grants}); err != nil {
		t.Fatal(err)
	}
	applied, _, _ := h.eng.Project(h.ctx, "p")
	if applied.Error != "" || !applied.ErrorAt.IsZero() || applied.Jobs != 2 || applied.File != "configs/p.yaml" {
		t.Fatalf("after r1: %+v; want its status and no error", applied)
	}
	at := t0.Add(time.Hour)
	if err := h.eng.RecordConfigError(h.ctx, "p", "", "configs/p.yaml:3: jobs[0].schedule: bad field", at, nil); err != nil {
		t.Fatal(err)
	}
	want := applied
	want.Error, want.ErrorAt = "configs/p.yaml:3: jobs[0].schedule: bad field", at
	p, _, _ = h.eng.Project(h.ctx, "p")
	if !reflect.DeepEqual(p, want) {
		t.Errorf("after r2 refused: %+v; want %+v", p, want)
	}
	if err := h.eng.RecordConfigError(h.ctx, "", "", "x", at, nil); err == nil {
		t.Error("an error recorded for no project")
	}
}

// TestRecordConfigErrorOfTheCommitRunningIsStale: an error about the
// commit running (another instance applied it meanwhile) is not recorded;
// one about another commit is, naming it, beside the running commit.
func TestRecordConfigErrorOfTheCommitRunningIsStale(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "@every 1h", Target: "rec"}
	running := &engine.Commit{SHA: "c2c2c2c2c2c2c2", Author: "Ada <ada@example.com>", Time: t0.Add(2 * time.Minute), Subject: "second", Link: "https://example.com/c2/p.yaml"}
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: running.SHA, File: "projects/p.yaml", Jobs: []engine.Job{{ID: "p/a", Definition: def}}, Commit: running}); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.RecordConfigError(h.ctx, "p", "projects/p.yaml", "stale", t0.Add(time.Hour), &engine.Commit{SHA: running.SHA, Time: running.Time}); err != nil {
		t.Fatal(err)
	}
	p, _, _ := h.eng.Project(h.ctx, "p")
	if p.Error != "" || p.Commit == nil || *p.Commit != *running {
		t.Fatalf("after a stale error: %+v (commit %+v); want no error and the running commit", p, p.Commit)
	}
	newer := &engine.Commit{SHA: "c3c3c3c3c3c3c3", Time: t0.Add(3 * time.Minute)}
	if err := h.eng.RecordConfigError(h.ctx, "p", "projects/p.yaml", "projects/p.yaml:3: bad", t0.Add(time.Hour), newer); err != nil {
		t.Fatal(err)
	}
	p, _, _ = h.eng.Project(h.ctx, "p")
	if p.Error != "projects/p.yaml:3: bad" || p.ErrorCommit != newer.SHA || *p.Commit != *running {
		t.Errorf("after a newer commit's error: %+v; want it beside the running commit", p)
	}
}
