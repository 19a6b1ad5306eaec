package datastore

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/store"
)

// kindMigration records how far a migration of stored entities got: one
// root entity per migration, named after it.
const kindMigration = "Migration"

// migrationBatch is how many invocation keys one step of a migration
// reads, and so the most records one transaction writes: a commit holds at
// most 500 mutations.
const migrationBatch = 500

// migrationEntity is where a migration stands. Nothing queries it, so no
// property is indexed.
type migrationEntity struct {
	// After is the last invocation key looked at; the next step starts
	// after it. Nil before the first step.
	After *datastore.Key `datastore:",noindex"`
	// Done is set by the step that reached the last key (it found fewer
	// than it asked for); from then on a call reads this entity and
	// nothing else.
	Done     bool  `datastore:",noindex"`
	Scanned  int64 `datastore:",noindex"`
	Migrated int64 `datastore:",noindex"`
}

// Migration is what one call of a migration (MigrateExpiry,
// MigrateListing) did, and where the migration stands after it.
type Migration struct {
	Scanned  int `json:"scanned"`  // invocation keys looked at by this call
	Migrated int `json:"migrated"` // records this call gave what they lacked
	// Total is how many records the migration migrated since it began,
	// in every call.
	Total int64 `json:"total"`
	Done  bool  `json:"done"` // no record is left lacking it
	// Finished tells that this call is the one that got it done.
	Finished bool `json:"finished,omitempty"`
}

// recordMigration gives invocation records properties that records an
// earlier release wrote lack. Datastore cannot query for a missing
// property, so it walks every Invocation key in key order.
type recordMigration struct {
	// name names its Migration entity.
	name string
	// has are the property = value pairs of which a record that needs
	// nothing has one: keys-only queries on their built-in indexes tell
	// those records, which are not read.
	has [][2]string
	// lacks returns the properties a stored record lacks, false if none.
	lacks func(k *datastore.Key, props datastore.PropertyList) ([]datastore.Property, bool)
}

// expiryMigration gives Expiry to the finished records a release before
// retention wrote.
var expiryMigration = recordMigration{
	name: "expiry",
	has:  [][2]string{{"Expiry", "done"}, {"Expiry", "failed"}},
	lacks: func(_ *datastore.Key, props datastore.PropertyList) ([]datastore.Property, bool) {
		class, ok := expiryToAdd(props)
		return []datastore.Property{{Name: "Expiry", Value: class}}, ok
	},
}

// listingMigration gives Project and Class to the records a release
// before the listing of a project's invocations wrote, unfinished ones
// too: every record has them since.
var listingMigration = recordMigration{
	name: "listing",
	has: func() [][2]string {
		var has [][2]string
		for _, c := range store.StatusClasses {
			has = append(has, [2]string{"Class", c})
		}
		return has
	}(),
	lacks: listingToAdd,
}

// MigrateExpiry gives the Expiry property to finished invocation records
// that a release before retention wrote without it, so that Expired finds
// them. Datastore cannot query for a missing property, so it walks every
// Invocation key in key order, up to budget keys per call, from where the
// last call stopped (kept in a Migration entity, so a crash or another
// instance goes on from there). Per batch, keys-only queries on the Expiry
// index tell the records that have it, which are not read; each of the
// others is read and written in a transaction on its job's group, so an
// unfinished record, or one deleted or rewritten meanwhile, is left as it
// is. Once the walk reaches the end, a call costs one lookup.
//
// Records an older release writes after the walk passed them (instances of
// both releases serving at once) keep lacking Expiry: deleting the
// Migration entity starts the walk again.
func (s *Store) MigrateExpiry(ctx context.Context, budget int) (Migration, error) {
	return s.migrate(ctx, expiryMigration, budget)
}

// MigrateListing gives Project and Class to the invocation records that a
// release before the listing of a project's invocations wrote, so that
// ProjectInvocations finds them: it is MigrateExpiry's walk, with the
// Class index telling the records that have them, and its own Migration
// entity, "listing".
func (s *Store) MigrateListing(ctx context.Context, budget int) (Migration, error) {
	return s.migrate(ctx, listingMigration, budget)
}

// migrate runs up to budget keys of mg's walk, from where its last call
// stopped.
func (s *Store) migrate(ctx context.Context, mg recordMigration, budget int) (Migration, error) {
	var res Migration
	mkey := datastore.NameKey(kindMigration, mg.name, nil)
	mkey.Namespace = s.opts.Namespace
	var m migrationEntity
	_, err := s.retry(ctx, func() error { return s.client.Get(ctx, mkey, &m) })
	if err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
		return res, fmt.Errorf("datastore: reading the %s migration's progress: %w", mg.name, err)
	}
	res.Total, res.Done = m.Migrated, m.Done
	for !m.Done && budget > 0 && ctx.Err() == nil {
		n := min(budget, migrationBatch)
		keys, migrated, err := s.migrateBatch(ctx, mg, m.After, n)
		if err != nil {
			return res, err
		}
		budget -= n
		res.Scanned += len(keys)
		res.Migrated += migrated
		m.Scanned += int64(len(keys))
		m.Migrated += int64(migrated)
		if len(keys) > 0 {
			m.After = keys[len(keys)-1]
		}
		m.Done = len(keys) < n
		if _, err := s.retry(ctx, func() error { _, err := s.client.Put(ctx, mkey, &m); return err }); err != nil {
			return res, fmt.Errorf("datastore: recording the %s migration's progress: %w", mg.name, err)
		}
		res.Total, res.Done, res.Finished = m.Migrated, m.Done, m.Done
	}
	return res, ctx.Err()
}

// migrateBatch gives what they lack to the records among the next n
// invocation keys after after (all of them, from the first, if nil). It
// returns the keys it looked at and how many records it wrote.
func (s *Store) migrateBatch(ctx context.Context, mg recordMigration, after *datastore.Key, n int) ([]*datastore.Key, int, error) {
	// Key order is served by the built-in indexes, and a keys-only
	// result reads an index entry, not the entity.
	q := datastore.NewQuery(kindInvocation).Namespace(s.opts.Namespace).Order("__key__").KeysOnly()
	if after != nil {
		q = q.FilterField("__key__", ">", after)
	}
	var keys []*datastore.Key
	if _, err := s.retry(ctx, func() error {
		var err error
		keys, err = s.client.GetAll(ctx, q.Limit(n), nil)
		return err
	}); err != nil {
		return nil, 0, fmt.Errorf("datastore: %s migration: listing invocations: %w", mg.name, err)
	}
	if len(keys) == 0 {
		return nil, 0, nil
	}
	// The records in the same range that need nothing: an equality
	// filter with a key range is served by the property's built-in index.
	has := map[string]bool{}
	for _, pv := range mg.has {
		q := datastore.NewQuery(kindInvocation).Namespace(s.opts.Namespace).KeysOnly().
			FilterField(pv[0], "=", pv[1]).FilterField("__key__", "<=", keys[len(keys)-1])
		if after != nil {
			q = q.FilterField("__key__", ">", after)
		}
		var with []*datastore.Key
		if _, err := s.retry(ctx, func() error {
			var err error
			with, err = s.client.GetAll(ctx, q, nil)
			return err
		}); err != nil {
			return nil, 0, fmt.Errorf("datastore: %s migration: listing records with %s: %w", mg.name, pv[0], err)
		}
		for _, k := range with {
			has[k.String()] = true
		}
	}
	// The rest, by job: each job's in one transaction on its group.
	var groups [][]*datastore.Key
	for _, k := range keys {
		if has[k.String()] {
			continue
		}
		if l := len(groups); l > 0 && groups[l-1][0].Parent.Equal(k.Parent) {
			groups[l-1] = append(groups[l-1], k)
		} else {
			groups = append(groups, []*datastore.Key{k})
		}
	}
	migrated := 0
	for _, g := range groups {
		var wrote int
		_, err := s.retry(ctx, func() error {
			var err error
			wrote, err = s.addLacking(ctx, mg, g)
			return err
		})
		if err != nil {
			return nil, 0, err
		}
		migrated += wrote
	}
	return keys, migrated, nil
}

// addLacking adds what mg says they lack to those of keys, invocations of
// one job, that lack it, in one transaction. The rest of each entity is
// put back as it was read, so properties this release does not know
// survive.
func (s *Store) addLacking(ctx context.Context, mg recordMigration, keys []*datastore.Key) (int, error) {
	dtx, err := s.client.NewTransaction(ctx, datastore.BeginLater)
	if err != nil {
		return 0, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = dtx.Rollback()
		}
	}()
	got := make([]datastore.PropertyList, len(keys))
	err = dtx.GetMulti(keys, got)
	var missing datastore.MultiError
	if err != nil && !errors.As(err, &missing) {
		return 0, fmt.Errorf("datastore: %s migration: reading invocations: %w", mg.name, err)
	}
	if s.afterMigrationRead != nil {
		s.afterMigrationRead()
	}
	var put []*datastore.Key
	var props []datastore.PropertyList
	for i, k := range keys {
		if missing != nil && missing[i] != nil {
			if errors.Is(missing[i], datastore.ErrNoSuchEntity) {
				continue // deleted since the key was listed
			}
			return 0, fmt.Errorf("datastore: %s migration: reading invocation %s: %w", mg.name, k, missing[i])
		}
		add, ok := mg.lacks(k, got[i])
		if !ok {
			continue
		}
		put = append(put, k)
		props = append(props, append(got[i], add...))
	}
	if len(put) == 0 {
		return 0, nil
	}
	if _, err := dtx.PutMulti(put, props); err != nil {
		return 0, fmt.Errorf("datastore: %s migration: writing invocations: %w", mg.name, err)
	}
	if _, err := dtx.Commit(); err != nil {
		return 0, err
	}
	committed = true
	return len(put), nil
}

// expiryToAdd returns the Expiry a stored invocation lacks: false if it
// has one already or is unfinished (and so must have none).
func expiryToAdd(props datastore.PropertyList) (string, bool) {
	var status string
	for _, p := range props {
		switch p.Name {
		case "Expiry":
			return "", false
		case "Status":
			status, _ = p.Value.(string)
		}
	}
	class := expiryClass(status)
	return class, class != ""
}

// listingToAdd returns the Project and Class a stored invocation lacks:
// false if it has them (every record of this release has both).
func listingToAdd(k *datastore.Key, props datastore.PropertyList) ([]datastore.Property, bool) {
	var status string
	for _, p := range props {
		switch p.Name {
		case "Class":
			return nil, false
		case "Status":
			status, _ = p.Value.(string)
		}
	}
	if k.Parent == nil {
		return nil, false
	}
	return listingProperties(k.Parent.Name, status), true
}
