package datastore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/retention"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
)

var migrateNow = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// putOldShape stores inv as a release before retention did: the properties
// Save gives, without Expiry, and without Project and Class, which came
// later.
func putOldShape(t *testing.T, s *Store, inv store.InvocationRecord) {
	t.Helper()
	props, err := (&invocationEntity{inv}).Save()
	if err != nil {
		t.Fatal(err)
	}
	old := datastore.PropertyList(slices.DeleteFunc(props, func(p datastore.Property) bool { return p.Name == "Expiry" || p.Name == "Project" || p.Name == "Class" }))
	if _, err := s.client.Put(t.Context(), s.invocationKey(inv.JobID, inv.ID), &old); err != nil {
		t.Fatal(err)
	}
}

// stored reads an invocation's properties as Datastore holds them.
func stored(t *testing.T, s *Store, jobID, id string) datastore.PropertyList {
	t.Helper()
	var props datastore.PropertyList
	if err := s.client.Get(t.Context(), s.invocationKey(jobID, id), &props); err != nil {
		t.Fatal(err)
	}
	return props
}

// byName is a property list in an order of its own, to compare two lists
// Datastore may return in different orders.
func byName(props datastore.PropertyList) datastore.PropertyList {
	out := slices.Clone(props)
	slices.SortFunc(out, func(a, b datastore.Property) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// migrateAll calls a migration (MigrateExpiry, MigrateListing) with budget
// until it is done, at most calls times, and returns what the calls did
// together.
func migrateAll(t *testing.T, migrate func(context.Context, int) (Migration, error), budget, calls int) Migration {
	t.Helper()
	var sum Migration
	for range calls {
		res, err := migrate(t.Context(), budget)
		if err != nil {
			t.Fatal(err)
		}
		sum.Scanned += res.Scanned
		sum.Migrated += res.Migrated
		sum.Total, sum.Done = res.Total, res.Done
		if res.Done {
			return sum
		}
	}
	t.Fatalf("%d calls with a budget of %d did not finish the migration: %+v", calls, budget, sum)
	return sum
}

// oldHistory stores, for jobID, statuses an hour apart ending an hour
// before migrateNow, in the old shape; r00 is the oldest.
func oldHistory(t *testing.T, s *Store, jobID string, statuses []string) {
	t.Helper()
	for i, st := range statuses {
		at := migrateNow.Add(-time.Duration(len(statuses)-i) * time.Hour)
		putOldShape(t, s, store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("r%02d", i), Occurrence: at, Status: st, Attempt: 1, Created: at, Log: []byte("attempt 1\n")})
	}
}

// TestRetentionDeletesOldShapeRecordsAfterMigration: records a release
// before retention wrote (no Expiry) are invisible to retention until the
// migration gives them their Expiry; then the real retention pass deletes
// the ones past the job's retention, and still not the unfinished one.
func TestRetentionDeletesOldShapeRecordsAfterMigration(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	eng := engine.New(s, &queue{}, map[string]targets.Target{"noop": noop.Target{}}, engine.Options{Now: func() time.Time { return migrateNow }})
	const jobID = "proj/upgraded"
	if err := eng.Define(t.Context(), jobID, engine.Definition{Schedule: "@every 1h", Target: "noop", Retention: engine.Retention{Age: 3*time.Hour + time.Minute, FailureAge: 5*time.Hour + time.Minute}}); err != nil {
		t.Fatal(err)
	}
	// r00 an old unfinished one, then successes, failures and a skip.
	oldHistory(t, s, jobID, []string{"RUNNING", "SUCCEEDED", "FAILED", "SUCCEEDED", "SKIPPED", "FAILED", "SUCCEEDED", "ABORTED", "SUCCEEDED", "SUCCEEDED"})
	r := retention.New(s, eng, retention.Options{Now: func() time.Time { return migrateNow }})

	if res, err := r.Pass(t.Context()); err != nil || res.Deleted != 0 {
		t.Fatalf("retention before the migration: %+v, %v; want nothing found (the records lack Expiry)", res, err)
	}
	mig := migrateAll(t, s.MigrateExpiry, 4, 10)
	if mig.Scanned != 10 || mig.Migrated != 9 || mig.Total != 9 {
		t.Errorf("migration = %+v, want 10 scanned and the 9 finished migrated", mig)
	}
	if _, err := r.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	invs, _, err := s.Invocations(t.Context(), jobID, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, inv := range invs {
		ids = append(ids, inv.ID)
	}
	slices.Sort(ids)
	// Successes and skips of the last 3 hours, failures of the last 5, and
	// the unfinished r00 however old.
	if want := []string{"r00", "r05", "r07", "r08", "r09"}; !slices.Equal(ids, want) {
		t.Errorf("after the migration retention keeps %q, want %q", ids, want)
	}
}

// TestExpiryMigrationLeavesUnfinishedRecordsAlone: an unfinished record
// has no Expiry (so retention cannot find it); the migration leaves every
// property of it as it was, and a record already in the new shape too.
func TestExpiryMigrationLeavesUnfinishedRecordsAlone(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	const jobID = "proj/busy"
	oldHistory(t, s, jobID, []string{"QUEUED", "LAUNCHING", "RUNNING", "RETRYING", "SUCCEEDED"})
	if _, err := s.Update(t.Context(), jobID, func(tx store.Tx) error {
		return tx.PutInvocation(&store.InvocationRecord{JobID: jobID, ID: "r05", Occurrence: migrateNow, Status: "FAILED", Attempt: 1})
	}); err != nil {
		t.Fatal(err)
	}
	before := map[string]datastore.PropertyList{}
	for _, id := range []string{"r00", "r01", "r02", "r03", "r05"} {
		before[id] = stored(t, s, jobID, id)
	}
	if mig := migrateAll(t, s.MigrateExpiry, 100, 2); mig.Migrated != 1 {
		t.Errorf("migration = %+v, want the one old finished record migrated", mig)
	}
	for id, was := range before {
		if got := stored(t, s, jobID, id); !reflect.DeepEqual(byName(got), byName(was)) {
			t.Errorf("%s changed:\n got %v\nwant %v", id, got, was)
		}
	}
	if _, ok := expiryToAdd(stored(t, s, jobID, "r04")); ok {
		t.Error("the old finished r04 still lacks Expiry after the migration")
	}
}

// TestExpiryMigrationGivesWhatSaveGives: the record release 313afd2 stored
// (testdata/entity/invocation.json) has, once migrated, the properties
// this release's Save gives it (invocation-expiry.json), and loads as the
// same record.
func TestExpiryMigrationGivesWhatSaveGives(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	golden := func(name string) datastore.PropertyList {
		b, err := os.ReadFile(filepath.Join("testdata", "entity", name))
		if err != nil {
			t.Fatal(err)
		}
		var gs []goldenProperty
		if err := json.Unmarshal(b, &gs); err != nil {
			t.Fatal(err)
		}
		return fromGolden(gs)
	}
	old := golden("invocation.json")
	if _, err := s.client.Put(t.Context(), s.invocationKey(goldenInvocation.JobID, goldenInvocation.ID), &old); err != nil {
		t.Fatal(err)
	}
	migrateAll(t, s.MigrateExpiry, 100, 2)
	got := stored(t, s, goldenInvocation.JobID, goldenInvocation.ID)
	// Datastore gives times back in the local zone.
	for i, p := range got {
		if at, ok := p.Value.(time.Time); ok {
			got[i].Value = at.UTC()
		}
	}
	if want := golden("invocation-expiry.json"); !reflect.DeepEqual(byName(got), byName(want)) {
		t.Errorf("the migrated record holds\n%v\nwant\n%v", byName(got), byName(want))
	}
	inv, err := s.Invocation(t.Context(), goldenInvocation.JobID, goldenInvocation.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inv.Occurrence.UTC(), goldenInvocation.Occurrence) || inv.Status != goldenInvocation.Status || string(inv.Log) != string(goldenInvocation.Log) {
		t.Errorf("the migrated record loads as %+v, want %+v", inv, goldenInvocation)
	}
}

// TestExpiryMigrationResumes: a migration cut short by its budget goes on,
// in another instance (a store on a new client), from where it stopped:
// every key is looked at once. A step redone because its instance died
// before recording it rewrites nothing.
func TestExpiryMigrationResumes(t *testing.T) {
	t.Parallel()
	counter := &Counter{}
	s := openStore(t, Options{}, counter)
	statuses := slices.Repeat([]string{"SUCCEEDED", "FAILED", "RUNNING"}, 10)
	for _, job := range []string{"proj/a", "proj/b", "proj/c"} {
		oldHistory(t, s, job, statuses)
	}
	first, err := s.MigrateExpiry(t.Context(), 25)
	if err != nil {
		t.Fatal(err)
	}
	if first.Done || first.Scanned != 25 {
		t.Fatalf("first call = %+v, want 25 keys looked at and not done", first)
	}
	// Another instance: nothing in memory is shared.
	other := New(newClient(t, nil), s.opts)
	t.Cleanup(func() { other.Close() })
	rest := migrateAll(t, other.MigrateExpiry, 25, 10)
	if first.Scanned+rest.Scanned != 90 || rest.Total != 60 {
		t.Errorf("the calls looked at %d keys and migrated %d records, want each of the 90 keys once and the 60 finished records",
			first.Scanned+rest.Scanned, rest.Total)
	}
	for _, job := range []string{"proj/a", "proj/b", "proj/c"} {
		ids, err := s.Expired(t.Context(), job, store.Expiry{Before: migrateNow}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 10 {
			t.Errorf("%s: retention finds %d successes, want all 10", job, len(ids))
		}
	}

	// An instance that died after a step's writes and before recording
	// it: the step is done again, and finds nothing to write.
	var m migrationEntity
	mkey := datastore.NameKey(kindMigration, expiryMigration.name, nil)
	mkey.Namespace = s.opts.Namespace
	if err := s.client.Get(t.Context(), mkey, &m); err != nil {
		t.Fatal(err)
	}
	m.After, m.Done = nil, false
	if _, err := s.client.Put(t.Context(), mkey, &m); err != nil {
		t.Fatal(err)
	}
	before := counter.Cost()
	again := migrateAll(t, s.MigrateExpiry, 100, 2)
	cost := counter.Cost().Sub(before)
	if again.Migrated != 0 || again.Scanned != 90 {
		t.Errorf("redone migration = %+v, want 90 keys looked at and nothing migrated", again)
	}
	// The only write is the progress record; the only lookups are that
	// record's and the 30 unfinished records' (the Expiry index tells
	// the 60 migrated ones without reading them).
	if cost.Writes != 1 || cost.Lookups != 31 {
		t.Errorf("redoing the migrated range cost %v, want one write (its progress) and 31 lookups", cost)
	}
}

// TestExpiryMigrationDoneCostsOneRead: once done, a call reads the
// Migration entity and nothing else, however large the history.
func TestExpiryMigrationDoneCostsOneRead(t *testing.T) {
	t.Parallel()
	counter := &Counter{}
	s := openStore(t, Options{}, counter)
	oldHistory(t, s, "proj/a", slices.Repeat([]string{"SUCCEEDED"}, 20))
	migrateAll(t, s.MigrateExpiry, 100, 2)
	before := counter.Cost()
	res, err := s.MigrateExpiry(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	cost := counter.Cost().Sub(before)
	if !res.Done || res.Scanned != 0 || res.Total != 20 {
		t.Errorf("call after done = %+v, want done, nothing looked at, 20 migrated in all", res)
	}
	if cost.Reads != 1 || cost.Lookups != 1 || cost.Writes != 0 || cost.Calls != 1 {
		t.Errorf("a call after done cost %v, want one lookup", cost)
	}
}

// TestExpiryMigrationCost notes what migrating a record costs, with the
// cost_test.go counter: per old finished record a keys-only result, a
// lookup and a write; per record that has Expiry already two index
// entries and no lookup; per batch the progress record and a commit per
// job.
func TestExpiryMigrationCost(t *testing.T) {
	t.Parallel()
	counter := &Counter{}
	s := openStore(t, Options{}, counter)
	const jobs, old, fresh = 4, 100, 25
	for j := range jobs {
		jobID := fmt.Sprintf("proj/j%d", j)
		oldHistory(t, s, jobID, slices.Repeat([]string{"SUCCEEDED", "FAILED"}, old/2))
		if _, err := s.Update(t.Context(), jobID, func(tx store.Tx) error {
			for i := range fresh {
				if err := tx.PutInvocation(&store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("s%02d", i), Occurrence: migrateNow.Add(time.Duration(i) * time.Minute), Status: "SUCCEEDED"}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := counter.Cost()
	mig := migrateAll(t, s.MigrateExpiry, 250, 10)
	cost := counter.Cost().Sub(before)
	if mig.Migrated != jobs*old || mig.Scanned != jobs*(old+fresh) {
		t.Fatalf("migration = %+v, want %d migrated of %d", mig, jobs*old, jobs*(old+fresh))
	}
	n := float64(mig.Migrated)
	t.Logf("expiry migration of %d old records among %d: %v; per migrated record reads=%.2f lookups=%.2f writes=%.2f commits=%.2f",
		mig.Migrated, mig.Scanned, cost, float64(cost.Reads)/n, float64(cost.Lookups)/n, float64(cost.Writes)/n, float64(cost.Commits)/n)
	// Two calls of 250 keys and a third that finds the end, each with a
	// lookup and a write of the progress record. The records that have
	// Expiry cost an index entry more each, and no lookup.
	const calls = 3
	wantLookups := int64(calls + jobs*old)
	wantReads := wantLookups + jobs*(old+fresh) + jobs*fresh
	wantWrites := int64(jobs*old + calls)
	if cost.Reads > wantReads || cost.Lookups > wantLookups || cost.Writes > wantWrites {
		t.Errorf("migration cost %v, want at most %d reads of which %d lookups, and %d writes", cost, wantReads, wantLookups, wantWrites)
	}
}

// TestExpiryMigrationYieldsToConcurrentChanges: records deleted or
// rewritten between the migration's read and its write are not written
// from what it read: its transaction loses, reads again, and leaves the
// deleted one deleted and the rewritten one as it now is.
func TestExpiryMigrationYieldsToConcurrentChanges(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	const jobID = "proj/racing"
	oldHistory(t, s, jobID, []string{"SUCCEEDED", "FAILED", "SUCCEEDED"})
	changed := false
	s.afterMigrationRead = func() {
		if changed {
			return
		}
		changed = true
		// Retention deletes r00; someone rewrites r02 in the shape
		// Save gives, with a message of its own.
		if _, err := s.Update(t.Context(), jobID, func(tx store.Tx) error {
			inv, err := tx.Invocation("r02")
			if err != nil {
				return err
			}
			inv.Message = "rewritten"
			if err := tx.PutInvocation(inv); err != nil {
				return err
			}
			return tx.DeleteInvocation("r00")
		}); err != nil {
			t.Errorf("the concurrent change: %v", err)
		}
	}
	mig := migrateAll(t, s.MigrateExpiry, 100, 2)
	if !changed {
		t.Fatal("the migration never reached its write")
	}
	if mig.Migrated != 1 {
		t.Errorf("migration = %+v, want only r01 migrated", mig)
	}
	if _, err := s.Invocation(t.Context(), jobID, "r00"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("r00, deleted during the migration: %v, want not found", err)
	}
	if inv, err := s.Invocation(t.Context(), jobID, "r02"); err != nil || inv.Message != "rewritten" {
		t.Errorf("r02, rewritten during the migration: %+v, %v; want the rewrite", inv, err)
	}
}
