package datastore

import (
	"context"
	"fmt"
	"sync"

	"github.com/sundial-cron/sundial/store"
)

// recentParallel bounds the ancestor queries Recent has in flight.
const recentParallel = 16

// Recent returns the newest n invocations of each named job. Datastore
// has no query across entity groups that stops after n per group, so each
// job is one ancestor query on the Occurrence index, run side by side:
// the page's wait is the slowest job's, not their sum.
func (s *Store) Recent(ctx context.Context, jobIDs []string, n int) (map[string][]*store.InvocationRecord, error) {
	out := map[string][]*store.InvocationRecord{}
	if n <= 0 || len(jobIDs) == 0 {
		return out, nil
	}
	if n > store.MaxRecent || len(jobIDs) > store.MaxRecentJobs {
		return nil, fmt.Errorf("datastore: Recent of %d jobs, %d each: at most %d jobs, %d each", len(jobIDs), n, store.MaxRecentJobs, store.MaxRecent)
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		slots    = make(chan struct{}, recentParallel)
		seen     = map[string]bool{}
	)
	for _, id := range jobIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			invs, _, err := s.Invocations(ctx, id, store.Page{Limit: n})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("datastore: recent invocations of %s: %w", id, err)
				}
				return
			}
			for _, inv := range invs {
				inv.Log, inv.Definition = nil, nil
			}
			if len(invs) > 0 {
				out[id] = invs
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}
