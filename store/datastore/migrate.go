package datastore

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/datastore"
)

// kindMigration records how far a migration of stored entities got: one
// root entity per migration, named after it.
const kindMigration = "Migration"

// expiryMigrationName names the migration that gives Expiry to records
// written before retention existed.
const expiryMigrationName = "expiry"

// migrationBatch is how many invocation keys one step of the migration
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

// ExpiryMigration is what one call of MigrateExpiry did, and where the
// migration stands after it.
type ExpiryMigration struct {
	Scanned  int `json:"scanned"`  // invocation keys looked at by this call
	Migrated int `json:"migrated"` // records this call gave their Expiry
	// Total is how many records the migration gave their Expiry since it
	// began, in every call.
	Total int64 `json:"total"`
	Done  bool  `json:"done"` // no record is left without its Expiry
	// Finished tells that this call is the one that got it done.
	Finished bool `json:"finished,omitempty"`
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
func (s *Store) MigrateExpiry(ctx context.Context, budget int) (ExpiryMigration, error) {
	var res ExpiryMigration
	mkey := datastore.NameKey(kindMigration, expiryMigrationName, nil)
	mkey.Namespace = s.opts.Namespace
	var m migrationEntity
	_, err := s.retry(ctx, func() error { return s.client.Get(ctx, mkey, &m) })
	if err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
		return res, fmt.Errorf("datastore: reading the expiry migration's progress: %w", err)
	}
	res.Total, res.Done = m.Migrated, m.Done
	for !m.Done && budget > 0 && ctx.Err() == nil {
		n := min(budget, migrationBatch)
		keys, migrated, err := s.migrateExpiryBatch(ctx, m.After, n)
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
			return res, fmt.Errorf("datastore: recording the expiry migration's progress: %w", err)
		}
		res.Total, res.Done, res.Finished = m.Migrated, m.Done, m.Done
	}
	return res, ctx.Err()
}

// migrateExpiryBatch gives their Expiry to the records among the next n
// invocation keys after after (all of them, from the first, if nil). It
// returns the keys it looked at and how many records it wrote.
func (s *Store) migrateExpiryBatch(ctx context.Context, after *datastore.Key, n int) ([]*datastore.Key, int, error) {
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
		return nil, 0, fmt.Errorf("datastore: expiry migration: listing invocations: %w", err)
	}
	if len(keys) == 0 {
		return nil, 0, nil
	}
	// The records in the same range that have Expiry: an equality filter
	// with a key range is served by the property's built-in index.
	has := map[string]bool{}
	for _, class := range []string{"done", "failed"} {
		q := datastore.NewQuery(kindInvocation).Namespace(s.opts.Namespace).KeysOnly().
			FilterField("Expiry", "=", class).FilterField("__key__", "<=", keys[len(keys)-1])
		if after != nil {
			q = q.FilterField("__key__", ">", after)
		}
		var with []*datastore.Key
		if _, err := s.retry(ctx, func() error {
			var err error
			with, err = s.client.GetAll(ctx, q, nil)
			return err
		}); err != nil {
			return nil, 0, fmt.Errorf("datastore: expiry migration: listing records with Expiry: %w", err)
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
			wrote, err = s.addExpiry(ctx, g)
			return err
		})
		if err != nil {
			return nil, 0, err
		}
		migrated += wrote
	}
	return keys, migrated, nil
}

// addExpiry adds Expiry to those of keys, invocations of one job, that are
// finished and lack it, in one transaction. The rest of each entity is put
// back as it was read, so properties this release does not know survive.
func (s *Store) addExpiry(ctx context.Context, keys []*datastore.Key) (int, error) {
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
		return 0, fmt.Errorf("datastore: expiry migration: reading invocations: %w", err)
	}
	if s.afterExpiryRead != nil {
		s.afterExpiryRead()
	}
	var put []*datastore.Key
	var props []datastore.PropertyList
	for i, k := range keys {
		if missing != nil && missing[i] != nil {
			if errors.Is(missing[i], datastore.ErrNoSuchEntity) {
				continue // deleted since the key was listed
			}
			return 0, fmt.Errorf("datastore: expiry migration: reading invocation %s: %w", k, missing[i])
		}
		class, ok := expiryToAdd(got[i])
		if !ok {
			continue
		}
		put = append(put, k)
		props = append(props, append(got[i], datastore.Property{Name: "Expiry", Value: class}))
	}
	if len(put) == 0 {
		return 0, nil
	}
	if _, err := dtx.PutMulti(put, props); err != nil {
		return 0, fmt.Errorf("datastore: expiry migration: writing invocations: %w", err)
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
