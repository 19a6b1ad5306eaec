package engine_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
)

// TestABackupTakenBeforeAnUpgradeRestoresAndRuns is docs/upgrade.md's
// embedded shape, step by step, on the previous release's database
// (testdata/replay/v0.db, schema version 2): a backup taken before the
// upgrade keeps that release's schema version, so that release still
// opens it; this release then runs on the database for half an hour; the
// backup, restored, is migrated and runs: nothing the upgraded server
// launched launches again (fail closed), the retry queued in the backup
// ends ABORTED rather than launch, and the occurrences after the restore
// run.
func TestABackupTakenBeforeAnUpgradeRestoresAndRuns(t *testing.T) {
	live := copyReplay(t)
	backup := filepath.Join(t.TempDir(), "before-upgrade.db")
	clk := fakeclock.New(replayEnd)
	if err := sqlite.Backup(t.Context(), live, backup, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if got, want := userVersion(t, backup), userVersion(t, filepath.Join("testdata", "replay", "v0.db")); got != want {
		t.Fatalf("the backup is at schema version %d, the database it copied at %d: the release it was taken under would refuse it", got, want)
	}

	// The upgrade: this release runs on the database for half an hour.
	tg := newReplayTargets()
	upgraded := openReplayAt(t, live, clk, tg, statemachine.Config{})
	if err := upgraded.eng.ApplyProject(upgraded.ctx, "replay", engine.Revision{ID: "r1", Jobs: replayConfig()}); err != nil {
		t.Fatal(err)
	}
	ranAt := replayEnd.Add(30 * time.Minute)
	if err := enginetest.RunUntil(upgraded.ctx, clk, upgraded.st, upgraded.disp, upgraded.wd, ranAt); err != nil {
		t.Fatal(err)
	}
	before := len(tg.ok.launches)
	if before != 6 { // every5 at 10:15 to 10:40
		t.Fatalf("the upgraded server launched %d attempts of every5, want 6", before)
	}
	if err := upgraded.st.Close(); err != nil {
		t.Fatal(err)
	}

	// The rollback's restore, 30 seconds on; the server's first config
	// refresh; and half an hour more.
	clk.Set(ranAt.Add(30 * time.Second))
	restoredAt, err := sqlite.Restored(t.Context(), backup, clk.Now())
	if err != nil || !restoredAt.Equal(clk.Now()) {
		t.Fatalf("Restored = %v, %v; want the first start, %v", restoredAt, err, clk.Now())
	}
	cfg := statemachine.DefaultConfig
	cfg.RestoredAt = restoredAt
	restored := openReplayAt(t, backup, clk, tg, cfg)
	if err := restored.eng.ApplyProject(restored.ctx, "replay", engine.Revision{ID: "r1", Jobs: replayConfig()}); err != nil {
		t.Fatal(err)
	}
	if err := enginetest.RunUntil(restored.ctx, clk, restored.st, restored.disp, restored.wd, ranAt.Add(40*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if v := userVersion(t, backup); v != userVersion(t, live) {
		t.Errorf("the restored backup is at schema version %d, want this release's %d", v, userVersion(t, live))
	}
	for _, tgt := range []*replayTarget{tg.ok, tg.fail, tg.async} {
		for attempt, n := range tgt.launches {
			if n > 1 {
				t.Errorf("%s launched %d times: the restored server ran again what the upgraded one had", attempt, n)
			}
		}
	}
	if after := len(tg.ok.launches) - before; after != 8 { // every5 at 10:45 to 11:20
		t.Errorf("the restored server launched %d attempts of every5, want the 8 after its start", after)
	}
	got := restored.records()
	for at := replayEnd.Add(3 * time.Minute); at.Before(ranAt); at = at.Add(5 * time.Minute) {
		if ran := "every5 " + at.Format("20060102T150405Z") + " SUCCEEDED 1"; slices.Contains(got, ran) {
			t.Errorf("%s: an occurrence the upgraded server ran, run again", ran)
		}
	}
	if w := "every5 20260302T101500Z SKIPPED 0"; !slices.Contains(got, w) {
		t.Errorf("no record %q: the occurrences between the backup and the restore are not recorded as missed:\n%s", w, strings.Join(got, "\n"))
	}
	if w := "retrying 20260302T101000Z ABORTED 2"; !slices.Contains(got, w) {
		t.Errorf("no record %q: the retry queued in the backup may have launched after it was taken:\n%s", w, strings.Join(got, "\n"))
	}
}

// userVersion is the schema version of the database at path.
func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
