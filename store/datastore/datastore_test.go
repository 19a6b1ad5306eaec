package datastore

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/option"

	"github.com/sundial-cron/sundial/internal/emulator"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/storetest"
)

func TestMain(m *testing.M) { emulator.Main(m) }

var namespaces atomic.Int64

// newClient connects to the emulator, counting what it is asked.
func newClient(t testing.TB, c *Counter) *datastore.Client {
	t.Helper()
	emulator.Datastore(t)
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
