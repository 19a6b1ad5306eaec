package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/sundial-cron/sundial/store"
)

func testProjects(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.Project(ctx, "billing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Project of a store without projects: %v; want ErrNotFound", err)
	}
	if ps, err := s.Projects(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Projects of a store without projects: %v, %v; want none", ps, err)
	}
	// A job of the project changes nothing: the record is apart.
	put(t, s, job("billing/a"))
	for _, p := range []*store.ProjectRecord{
		{ID: "ops", Encoded: []byte("ops v1")},
		{ID: "billing", Encoded: []byte("billing v1")},
		{ID: "billing", Encoded: []byte("billing v2\x00")},
		{ID: "empty"},
	} {
		if err := s.PutProject(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Project(ctx, "billing")
	if err != nil || got.ID != "billing" || string(got.Encoded) != "billing v2\x00" {
		t.Errorf("Project(billing) = %+v, %v; want the second write whole", got, err)
	}
	ps, err := s.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, p := range ps {
		listed = append(listed, p.ID+"="+string(p.Encoded))
	}
	if want := []string{"billing=billing v2\x00", "empty=", "ops=ops v1"}; !slices.Equal(listed, want) {
		t.Errorf("Projects = %q; want %q", listed, want)
	}
	if err := s.PutProject(ctx, &store.ProjectRecord{}); err == nil {
		t.Error("PutProject of a record without an id succeeded")
	}
}

func testUpdateProject(t *testing.T, s store.Store) {
	ctx := t.Context()
	boom := errors.New("boom")
	if err := s.UpdateProject(ctx, "billing", func(old *store.ProjectRecord) (*store.ProjectRecord, error) {
		if old != nil {
			t.Errorf("UpdateProject of a project without a record read %+v; want nil", old)
		}
		return &store.ProjectRecord{ID: "billing", Encoded: []byte("v")}, boom
	}); !errors.Is(err, boom) {
		t.Errorf("UpdateProject whose fn failed: %v; want fn's error", err)
	}
	if err := s.UpdateProject(ctx, "billing", func(*store.ProjectRecord) (*store.ProjectRecord, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Project(ctx, "billing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after an fn that failed and one that returned nil, Project: %v; want ErrNotFound", err)
	}
	// Each writer appends its mark to what it read: a write lost to
	// another in between would lose a mark.
	const writers = 8
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			err := s.UpdateProject(ctx, "billing", func(old *store.ProjectRecord) (*store.ProjectRecord, error) {
				var b []byte
				if old != nil {
					b = slices.Clone(old.Encoded)
				}
				return &store.ProjectRecord{ID: "billing", Encoded: append(b, byte('a'+i))}, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Project(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	marks := slices.Sorted(slices.Values(got.Encoded))
	if string(marks) != "abcdefgh" {
		t.Errorf("after %d concurrent updates the record holds %q; want every writer's mark", writers, got.Encoded)
	}
	if err := s.UpdateProject(ctx, "", func(*store.ProjectRecord) (*store.ProjectRecord, error) { return nil, nil }); err == nil {
		t.Error("UpdateProject without an id succeeded")
	}
}
