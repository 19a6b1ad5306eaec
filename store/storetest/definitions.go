package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// putDefinitions puts a job's definitions in one Update, and fails it with
// fail if that is not nil.
func putDefinitions(ctx context.Context, s store.Store, jobID string, fail error, defs ...[]byte) ([]string, error) {
	var hashes []string
	_, err := s.Update(ctx, jobID, func(tx store.Tx) error {
		hashes = hashes[:0]
		for _, d := range defs {
			h, err := tx.PutDefinition(d)
			if err != nil {
				return err
			}
			hashes = append(hashes, h)
		}
		return fail
	})
	return hashes, err
}

func readDefinition(t *testing.T, s store.Store, jobID, hash string, want []byte) {
	t.Helper()
	got, err := s.Definition(t.Context(), jobID, hash)
	switch {
	case want == nil && !errors.Is(err, store.ErrNotFound):
		t.Errorf("Definition(%s, %.8s) = %d bytes, %v; want ErrNotFound", jobID, hash, len(got), err)
	case want != nil && (err != nil || !bytes.Equal(got, want)):
		t.Errorf("Definition(%s, %.8s) = %q, %v; want %q", jobID, hash, got, err, want)
	}
}

func testDefinitions(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := []byte("definition a \x00\xff"), []byte("definition b")
	put(t, s, job("proj/a"), job("proj/b"))

	hashes, err := putDefinitions(ctx, s, "proj/a", errBoom, a)
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update error = %v, want fn's error", err)
	}
	if len(hashes) != 1 || hashes[0] != store.DefinitionHash(a) {
		t.Fatalf("PutDefinition = %v, want its DefinitionHash %s", hashes, store.DefinitionHash(a))
	}
	readDefinition(t, s, "proj/a", hashes[0], nil)

	// The same again, now committed, twice in one transaction and with
	// another; what failed above must not pass for stored.
	hashes, err = putDefinitions(ctx, s, "proj/a", nil, a, b, a)
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := store.DefinitionHash(a), store.DefinitionHash(b)
	if !slices.Equal(hashes, []string{ha, hb, ha}) {
		t.Errorf("PutDefinition of a, b, a = %v, want %v", hashes, []string{ha, hb, ha})
	}
	readDefinition(t, s, "proj/a", ha, a)
	readDefinition(t, s, "proj/a", hb, b)
	readDefinition(t, s, "proj/a", store.DefinitionHash([]byte("never put")), nil)
	// Definitions belong to their job's group.
	readDefinition(t, s, "proj/b", ha, nil)
	if _, err := putDefinitions(ctx, s, "proj/b", nil, a); err != nil {
		t.Fatal(err)
	}
	readDefinition(t, s, "proj/b", ha, a)
	// Putting a stored one again changes nothing.
	if _, err := putDefinitions(ctx, s, "proj/a", nil, a); err != nil {
		t.Fatal(err)
	}
	readDefinition(t, s, "proj/a", ha, a)
}

// A large definition and many invocations that run under it, each created
// in its own transaction that puts the definition, as the engine does: the
// store grows by about one copy of it, not one per invocation.
func testDefinitionStoredOnce(t *testing.T, s store.Store) {
	fp, ok := s.(Footprint)
	if !ok {
		t.Fatalf("%T does not implement storetest.Footprint", s)
	}
	ctx := t.Context()
	def := make([]byte, 256<<10)
	for i := range def {
		def[i] = byte(i * 7919 >> 3) // not a run that a backend might compress
	}
	put(t, s, job("proj/big"))
	before, err := fp.StoredBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	for i := range n {
		_, err := s.Update(ctx, "proj/big", func(tx store.Tx) error {
			hash, err := tx.PutDefinition(def)
			if err != nil {
				return err
			}
			return tx.PutInvocation(&store.InvocationRecord{JobID: "proj/big", ID: fmt.Sprintf("i%02d", i),
				Occurrence: t0.Add(time.Duration(i) * time.Minute), Status: "SUCCEEDED", DefinitionHash: hash})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	after, err := fp.StoredBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	grown := after - before
	t.Logf("%d invocations under a %d-byte definition grew the store by %d bytes", n, len(def), grown)
	if limit := int64(2 * len(def)); grown >= limit {
		t.Errorf("%d invocations under a %d-byte definition grew the store by %d bytes, want less than %d", n, len(def), grown, limit)
	}
	for _, id := range []string{"i00", fmt.Sprintf("i%02d", n-1)} {
		inv, err := s.Invocation(ctx, "proj/big", id)
		if err != nil {
			t.Fatal(err)
		}
		readDefinition(t, s, "proj/big", inv.DefinitionHash, def)
	}
}
