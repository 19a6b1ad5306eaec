package datastore

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// ProjectInvocations lists the project's invocation records that f picks,
// newest occurrence first, ties in key order. Across the project it is a
// query on Project (and Class), sorted by the composite indexes
// (Project, Occurrence desc) and (Project, Class, Occurrence desc) that
// index.yaml declares; for one job, an ancestor query on the job's
// group, sorted by (ancestor, Occurrence desc) or, for a class,
// (ancestor, Class, Occurrence desc). Either reads the page's entities
// and one index entry more. Records an earlier release wrote lack
// Project and Class until the listing migration (MigrateListing) gives
// them theirs; a job's listing without a class finds them all the same.
func (s *Store) ProjectInvocations(ctx context.Context, project string, f store.InvocationFilter, p store.Page) ([]*store.InvocationRecord, string, error) {
	q := datastore.NewQuery(kindInvocation).Namespace(s.opts.Namespace)
	if f.JobID != "" {
		if jobid.Split(f.JobID).Project != project {
			return nil, "", fmt.Errorf("datastore: job %s is not of project %s", f.JobID, project)
		}
		q = q.Ancestor(s.jobKey(f.JobID))
	} else {
		q = q.FilterField("Project", "=", project)
	}
	if f.Class != "" {
		q = q.FilterField("Class", "=", f.Class)
	}
	if !f.Since.IsZero() {
		q = q.FilterField("Occurrence", ">=", f.Since)
	}
	q = q.Order("-Occurrence")
	var invs []*store.InvocationRecord
	next, err := s.page(ctx, q, "p", p, func() { invs = nil }, func(it *datastore.Iterator) error {
		var e invocationEntity
		if _, err := it.Next(&e); err != nil {
			return err
		}
		e.Log, e.Definition = nil, nil
		invs = append(invs, &e.InvocationRecord)
		return nil
	})
	return invs, next, err
}
