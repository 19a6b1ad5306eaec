package engine_test

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
)

// fileBytes is the size of the harness's database as SQLite counts it:
// its pages, those still in the WAL included.
func (h *harness) fileBytes() int64 {
	h.t.Helper()
	db, err := sql.Open("sqlite", "file:"+h.path+"?mode=ro")
	if err != nil {
		h.t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRowContext(h.ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// Issue 16, finding 7: every invocation stored a copy of its job's
// definition, so a large one on a frequent schedule grew the file by its
// size at every run. Now a job's invocations share one stored copy of each
// definition: thirty runs of a job with a 256 KiB spec grow the file by
// less than that spec twice over (the job's own row is rewritten on every
// run), where the copies would be thirty times it.
func TestInvocationsOfAJobShareOneStoredCopyOfItsDefinition(t *testing.T) {
	h := newHarness(t, engine.Options{})
	pad := strings.Repeat("x", 256<<10)
	def := engine.Definition{Schedule: "* * * * *", Target: "rec", Spec: json.RawMessage(`{"pad":"` + pad + `"}`)}
	if err := h.eng.Define(h.ctx, "p/big", def); err != nil {
		t.Fatal(err)
	}
	// The first run stores the definition and settles the file's pages.
	h.runUntil(t0.Add(time.Minute))
	before := h.fileBytes()

	const runs = 30
	h.runUntil(t0.Add((1 + runs) * time.Minute))
	grown := h.fileBytes() - before

	ended := 0
	for _, inv := range h.invocations("p/big") {
		if inv.Status == string(statemachine.StatusSucceeded) {
			ended++
		}
	}
	if ended != runs+1 {
		t.Fatalf("%d invocations succeeded, want %d", ended, runs+1)
	}
	t.Logf("%d runs of a job with a %d-byte spec grew the file by %d bytes", runs, len(def.Spec), grown)
	if limit := 2 * int64(len(def.Spec)); grown >= limit {
		t.Errorf("%d runs grew the file by %d bytes, want less than %d: the definition is stored per invocation", runs, grown, limit)
	}
}

// An invocation runs, and shows, the definition its job had when it was
// created: its retry after the job was redefined is launched with the old
// spec, and InvocationDefinition gives each invocation its own definition,
// also to another process, which has decoded neither.
func TestAnInvocationKeepsTheDefinitionItWasCreatedUnderAfterARedefinition(t *testing.T) {
	h := newHarness(t, engine.Options{})
	specs := map[string][]string{} // invocation key -> the specs of its attempts
	h.tgt.mu.Lock()
	h.tgt.fail = true
	h.tgt.check = func(req targets.Request) { specs[req.Key] = append(specs[req.Key], string(req.Spec)) }
	h.tgt.mu.Unlock()

	policy := statemachine.Policy{MaxAttempts: 2, MinBackoff: time.Hour, MaxBackoff: time.Hour}
	oldDef := engine.Definition{Schedule: "0 * * * *", Target: "rec", Policy: policy, Spec: json.RawMessage(`{"revision":"old"}`)}
	newDef := oldDef
	newDef.Spec = json.RawMessage(`{"revision":"new"}`)
	if err := h.eng.Define(h.ctx, "p/job", oldDef); err != nil {
		t.Fatal(err)
	}
	// 11:00's first attempt fails; its retry waits until 12:00.
	h.runUntil(t0.Add(61 * time.Minute))
	if err := h.eng.Define(h.ctx, "p/job", newDef); err != nil {
		t.Fatal(err)
	}
	h.tgt.mu.Lock()
	h.tgt.fail = false
	h.tgt.mu.Unlock()
	h.runUntil(t0.Add(3*time.Hour + time.Minute))

	const retried = "p/job/20260302T110000Z"
	h.tgt.mu.Lock()
	got := specs[retried]
	h.tgt.mu.Unlock()
	if want := []string{`{"revision":"old"}`, `{"revision":"old"}`}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the attempts of %s were given specs %v, want %v", retried, got, want)
	}

	_, other, _ := h.open("proc-2", engine.Options{})
	byID := map[string]*store.InvocationRecord{}
	for _, inv := range h.invocations("p/job") {
		byID[inv.ID] = inv
	}
	for id, want := range map[string]engine.Definition{"20260302T110000Z": oldDef, "20260302T130000Z": newDef} {
		inv, ok := byID[id]
		if !ok {
			t.Fatalf("no invocation %s; have %v", id, byID)
		}
		for name, eng := range map[string]*engine.Engine{"the engine that ran it": h.eng, "another process": other} {
			def, err := eng.InvocationDefinition(h.ctx, inv)
			if err != nil {
				t.Fatalf("%s: InvocationDefinition(%s): %v", name, id, err)
			}
			if !def.Equal(&want) {
				t.Errorf("%s: invocation %s shows %+v, want %+v", name, id, def, want)
			}
		}
	}
}

// An invocation names the config revision its definition came from: a
// revision that leaves the job as it was keeps the one that defined it,
// and one that changes the job is named by the invocations after it.
func TestInvocationsNameTheRevisionTheirDefinitionCameFrom(t *testing.T) {
	h := newHarness(t, engine.Options{})
	apply := func(rev, schedule string) {
		t.Helper()
		if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: rev, Jobs: []engine.Job{{ID: "p/a", Definition: engine.Definition{Schedule: schedule, Target: "rec"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	newest := func() string {
		t.Helper()
		invs := h.invocations("p/a")
		if len(invs) == 0 {
			t.Fatal("no invocation")
		}
		def, err := h.eng.InvocationDefinition(h.ctx, invs[0])
		if err != nil {
			t.Fatal(err)
		}
		return def.Revision
	}
	apply("r1", "* * * * *")
	h.runUntil(t0.Add(time.Minute))
	if r := newest(); r != "r1" {
		t.Errorf("under r1 the invocation names %q", r)
	}
	apply("r2", "* * * * *") // the same job
	h.runUntil(t0.Add(2 * time.Minute))
	if r := newest(); r != "r1" {
		t.Errorf("after r2, which left the job as it was, the invocation names %q; want r1", r)
	}
	apply("r3", "*/1 * * * *")
	h.runUntil(t0.Add(3 * time.Minute))
	if r := newest(); r != "r3" {
		t.Errorf("after r3 changed the job the invocation names %q; want r3", r)
	}
}
