package simulate

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/internal/standin"
	"github.com/sundial-cron/sundial/store"
	dsstore "github.com/sundial-cron/sundial/store/datastore"
	"github.com/sundial-cron/sundial/task"
)

// datastoreBackend is the cloud shape: the Datastore store on an emulator,
// whose transactions return their tasks for the engine to post after the
// commit, and a queue that behaves as Cloud Tasks does.
type datastoreBackend struct {
	sim   *sim
	st    *dsstore.Store
	cost  *dsstore.Counter
	q     *cloudQueue
	calls *countingStore
}

// openDatastore connects to the emulator at host, never to a real
// database, and keeps the run's entities in a namespace of their own.
func openDatastore(ctx context.Context, s *sim, host string) (*datastoreBackend, error) {
	ns := make([]byte, 8)
	if _, err := rand.Read(ns); err != nil {
		return nil, err
	}
	cost := &dsstore.Counter{}
	client, err := datastore.NewClient(ctx, "sundial-simulate",
		append(standin.ClientOptions("passthrough:///"+host), cost.ClientOption())...)
	if err != nil {
		return nil, fmt.Errorf("datastore emulator at %s: %w", host, err)
	}
	st := dsstore.New(client, dsstore.Options{Namespace: fmt.Sprintf("simulate-%x", ns)})
	return &datastoreBackend{sim: s, st: st, cost: cost, calls: &countingStore{Store: st}}, nil
}

func (b *datastoreBackend) store() store.Store { return b.calls }

func (b *datastoreBackend) queue(handle task.Handler) task.Queue {
	b.q = newCloudQueue(func() time.Time { return b.sim.now }, handle)
	return b.q
}

func (b *datastoreBackend) runDue(ctx context.Context) (time.Time, bool, error) {
	return b.q.runDue(ctx)
}

func (b *datastoreBackend) nextDue(context.Context) (time.Time, bool, error) {
	next, ok := b.q.next()
	return next, ok, nil
}

// lose does nothing: the create that would have made the task is the one
// that never arrives.
func (b *datastoreBackend) lose(context.Context, task.Task) error { return nil }

func (b *datastoreBackend) purge(context.Context) error {
	b.q.purge()
	return nil
}

func (b *datastoreBackend) down(from, to time.Time) { b.q.down(from, to) }

// maxSkew: App Engine instances and Cloud Tasks read Google's synchronized
// clocks, which agree to far less than a second; a few seconds is already
// generous. The engine needs them to agree to well within TaskGrace (30s):
// Cloud Tasks delivers by its clock, the watchdog judges by the instance's,
// and an instance minutes ahead would have the watchdog re-issue every task
// before Cloud Tasks delivers it.
func (b *datastoreBackend) maxSkew() time.Duration { return 5 * time.Second }

// clockSteps: the instances and Cloud Tasks read Google's clocks, which
// are smeared (leap seconds) rather than stepped; an instance does not
// resume from a snapshot.
func (b *datastoreBackend) clockSteps() bool { return false }

func (b *datastoreBackend) report(r *Report) {
	c := b.cost.Cost()
	r.StoreUpdates = b.calls.updates.Load()
	r.StoreCommits = uint64(c.Commits)
	r.DatastoreReads, r.DatastoreWrites = c.Reads, c.Writes
}

func (b *datastoreBackend) close() error { return b.st.Close() }

// countingStore counts the Updates that succeeded, as store/sqlite's Stats
// do; the Counter sees only the commits (an Update that wrote nothing
// makes none).
type countingStore struct {
	store.Store
	updates atomic.Uint64
}

func (c *countingStore) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	tasks, err := c.Store.Update(ctx, jobID, fn)
	if err == nil {
		c.updates.Add(1)
	}
	return tasks, err
}
