package datastore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/storetest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

var namespaces atomic.Int64

// newClient connects to the emulator, counting what it is asked.
func newClient(t testing.TB, c *Counter) *datastore.Client {
	t.Helper()
	emulatortest.Datastore(t)
	var opts []option.ClientOption
	if c != nil {
		opts = append(opts, c.ClientOption())
	}
	client, err := datastore.NewClient(t.Context(), "sundial-test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// openStore returns a store in a namespace of its own: empty, and apart
// from every other test's, on one emulator.
func openStore(t testing.TB, opts Options, c *Counter) *Store {
	t.Helper()
	opts.Namespace = fmt.Sprintf("test-%d-%d", os.Getpid(), namespaces.Add(1))
	s := New(newClient(t, c), opts)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openStore(t, Options{}, nil) })
}

// TestSubmitRaisesAPanicInItsWait: Submit runs the Update on a goroutine
// of its own; a panic in fn there is raised in the caller of wait, as
// Update raises it in its caller, not in a goroutine no one recovers.
func TestSubmitRaisesAPanicInItsWait(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	wait := s.Submit(t.Context(), "proj/panics", func(store.Tx) error { panic("boom") })
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("wait raised %v; want the function's panic, boom", p)
		}
	}()
	_, err := wait()
	t.Errorf("wait returned %v; want it to raise the function's panic", err)
}

// StoredBytes adds up the store's entities as Datastore sizes them for
// storage: each key's name and each property's name and value, strings and
// blobs at their length and other values at 8 bytes (storetest.Footprint).
// The emulator keeps no statistics entities to ask instead.
func (s *Store) StoredBytes(ctx context.Context) (int64, error) {
	it := s.client.Run(ctx, datastore.NewQuery("").Namespace(s.opts.Namespace))
	var n int64
	for {
		var props datastore.PropertyList
		k, err := it.Next(&props)
		if errors.Is(err, iterator.Done) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		for ; k != nil; k = k.Parent {
			n += int64(len(k.Kind) + len(k.Name))
		}
		for _, p := range props {
			n += int64(len(p.Name))
			switch v := p.Value.(type) {
			case string:
				n += int64(len(v))
			case []byte:
				n += int64(len(v))
			case int64, bool, float64, time.Time, nil:
				n += 8
			default:
				return 0, fmt.Errorf("property %s holds %T", p.Name, p.Value)
			}
		}
	}
}
