package engine_test

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// TestRestoredBackupLaunchesNothingTwice: a backup taken while a manual
// occurrence was queued, restored after that occurrence and later
// scheduled ones had launched, and started within the job's catch-up
// window of the last of them: nothing the first server launched launches
// again (fail closed), and the job goes on with new occurrences.
func TestRestoredBackupLaunchesNothingTwice(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/every", "* * * * *", statemachine.Policy{Overlap: statemachine.OverlapSkip, CatchupWindow: time.Hour}, "rec")
	h.runUntil(t0.Add(10*time.Minute + 30*time.Second))
	if _, err := h.eng.Trigger(h.ctx, "p/every", alice); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := sqlite.Backup(h.ctx, h.path, backup, h.clock()); err != nil {
		t.Fatal(err)
	}
	// The first server launches the queued trigger and 20 more minutes.
	h.runUntil(t0.Add(30*time.Minute + 30*time.Second))
	before, most := h.tgt.total()
	if most != 1 || before < 21 {
		t.Fatalf("before the restore: %d launches, at most %d of one attempt; want 21 or more, once each", before, most)
	}

	// The restore: a server starts on the backup within the catch-up
	// window of occurrence 10:30, which already ran.
	restoredAt, err := sqlite.Restored(h.ctx, backup, h.clock())
	if err != nil || restoredAt.IsZero() {
		t.Fatalf("Restored = %v, %v; want the first start", restoredAt, err)
	}
	st, err := sqlite.Open(backup, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := statemachine.DefaultConfig
	cfg.RestoredAt = restoredAt
	q := &enginetest.LateQueue{}
	eng := engine.New(st, q, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock, Config: cfg})
	disp := local.New(st, eng.HandleTask, local.Options{Owner: "restored", Workers: 4, OrphanAfter: 10 * time.Second, Now: h.clock, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = disp
	wd := watchdog.New(st, eng, watchdog.Options{Now: h.clock})
	if err := enginetest.RunUntil(h.ctx, h.clk, st, disp, wd, t0.Add(40*time.Minute+30*time.Second)); err != nil {
		t.Fatal(err)
	}
	after, most := h.tgt.total()
	if most != 1 {
		t.Errorf("after the restore an attempt launched %d times: the restored server ran again what the first had run", most)
	}
	// 10:31 to 10:40 are new: they run.
	if after-before != 10 {
		t.Errorf("the restored server launched %d occurrences, want the 10 after its start", after-before)
	}
	invs, _, err := st.Invocations(h.ctx, "p/every", store.Page{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	manual := 0
	for _, inv := range invs {
		if !inv.Manual {
			continue
		}
		manual++
		if inv.Manual && inv.Status != "ABORTED" {
			t.Errorf("the trigger queued in the backup is %s, want ABORTED", inv.Status)
		}
	}
	if manual != 1 {
		t.Errorf("%d manual invocations in the restored history, want the one of the backup", manual)
	}
}
