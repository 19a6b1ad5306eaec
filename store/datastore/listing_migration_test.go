package datastore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/store"
)

// listedIDs is what ProjectInvocations lists of project for f, by id.
func listedIDs(t *testing.T, s *Store, project string, f store.InvocationFilter) []string {
	t.Helper()
	invs, _, err := s.ProjectInvocations(t.Context(), project, f, store.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, inv := range invs {
		ids = append(ids, inv.JobID+" "+inv.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestListingMigrationListsOldRecords: records an earlier release wrote
// (no Project, no Class) are not in the project's listing, but are in
// their job's own listing without a class; once the listing migration has
// walked them, each is listed with its project and in its class,
// unfinished ones too. A second walk writes nothing: the Class index
// tells it every record has them.
func TestListingMigrationListsOldRecords(t *testing.T) {
	t.Parallel()
	counter := &Counter{}
	s := openStore(t, Options{}, counter)
	oldHistory(t, s, "proj/a", []string{"RUNNING", "FAILED", "SUCCEEDED"})
	oldHistory(t, s, "proj/b", []string{"ABORTED", "SKIPPED"})
	oldHistory(t, s, "other/a", []string{"FAILED"})

	if got := listedIDs(t, s, "proj", store.InvocationFilter{}); len(got) != 0 {
		t.Errorf("before the migration the project lists %q; want nothing (the records lack Project)", got)
	}
	if got, want := listedIDs(t, s, "proj", store.InvocationFilter{JobID: "proj/a"}), []string{"proj/a r00", "proj/a r01", "proj/a r02"}; !slices.Equal(got, want) {
		t.Errorf("before the migration the job lists %q; want %q", got, want)
	}

	if mig := migrateAll(t, s.MigrateListing, 4, 10); mig.Scanned != 6 || mig.Migrated != 6 {
		t.Errorf("migration = %+v, want all 6 records looked at and migrated", mig)
	}
	for _, tt := range []struct {
		f    store.InvocationFilter
		want []string
	}{
		{store.InvocationFilter{}, []string{"proj/a r00", "proj/a r01", "proj/a r02", "proj/b r00", "proj/b r01"}},
		{store.InvocationFilter{Class: store.ClassFailed}, []string{"proj/a r01", "proj/b r00"}},
		{store.InvocationFilter{Class: store.ClassRunning}, []string{"proj/a r00"}},
		{store.InvocationFilter{JobID: "proj/b", Class: store.ClassSkipped}, []string{"proj/b r01"}},
	} {
		if got := listedIDs(t, s, "proj", tt.f); !slices.Equal(got, tt.want) {
			t.Errorf("after the migration, %+v lists %q; want %q", tt.f, got, tt.want)
		}
	}

	var m migrationEntity
	mkey := datastore.NameKey(kindMigration, listingMigration.name, nil)
	mkey.Namespace = s.opts.Namespace
	if err := s.client.Get(t.Context(), mkey, &m); err != nil {
		t.Fatal(err)
	}
	m.After, m.Done = nil, false
	if _, err := s.client.Put(t.Context(), mkey, &m); err != nil {
		t.Fatal(err)
	}
	before := counter.Cost()
	again := migrateAll(t, s.MigrateListing, 100, 2)
	if cost := counter.Cost().Sub(before); again.Migrated != 0 || cost.Writes != 1 || cost.Lookups != 1 {
		t.Errorf("a second walk = %+v and cost %v; want nothing migrated, one write (its progress) and one lookup (that record)", again, cost)
	}
}

// TestListingMigrationGivesWhatSaveGives: the record the release before
// stored (invocation-expiry.json), and the one release 313afd2 stored
// (invocation.json) once both migrations ran, hold the properties this
// release's Save gives (invocation-listing.json).
func TestListingMigrationGivesWhatSaveGives(t *testing.T) {
	t.Parallel()
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
	for _, old := range []string{"invocation-expiry.json", "invocation.json"} {
		s := openStore(t, Options{}, nil)
		props := golden(old)
		if _, err := s.client.Put(t.Context(), s.invocationKey(goldenInvocation.JobID, goldenInvocation.ID), &props); err != nil {
			t.Fatal(err)
		}
		migrateAll(t, s.MigrateExpiry, 100, 2)
		migrateAll(t, s.MigrateListing, 100, 2)
		got := stored(t, s, goldenInvocation.JobID, goldenInvocation.ID)
		for i, p := range got {
			if at, ok := p.Value.(time.Time); ok {
				got[i].Value = at.UTC()
			}
		}
		if want := golden("invocation-listing.json"); !reflect.DeepEqual(byName(got), byName(want)) {
			t.Errorf("%s migrated holds\n%v\nwant\n%v", old, byName(got), byName(want))
		}
	}
}
