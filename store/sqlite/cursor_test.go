package sqlite

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// TestCursorsOfThePreviousReleaseStillPage: testdata/cursor's v0 files are
// cursors release 313afd2 returned (for its replay database, see
// engine/testdata/replay), without a version mark; they page on as this
// release's own cursor for the same row does, so someone paging through an
// upgrade gets the next page, not an error. This release's cursors are
// pinned by their spelling.
func TestCursorsOfThePreviousReleaseStillPage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, id := range []string{"replay/autodisabled", "replay/disabled", "replay/every5"} {
		if _, err := s.Update(ctx, id, func(tx store.Tx) error {
			if err := tx.PutJob(&store.JobRecord{ID: id, Project: "replay", State: "SCHEDULED"}); err != nil {
				return err
			}
			for _, inv := range []struct {
				id string
				at time.Time
			}{{"manual-1", at}, {"20260302T100500Z", at.Add(5 * time.Minute)}, {"20260302T101000Z", at.Add(10 * time.Minute)}} {
				if err := tx.PutInvocation(&store.InvocationRecord{JobID: id, ID: inv.id, Occurrence: inv.at, Status: "SUCCEEDED"}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		listing string
		v1      string // base64 of "1" + kind + key
		page    func(store.Page) ([]string, string, error)
	}{
		{"jobs", "MWpyZXBsYXkvYXV0b2Rpc2FibGVk", func(p store.Page) ([]string, string, error) {
			jobs, next, err := s.Jobs(ctx, "replay", p)
			var ids []string
			for _, j := range jobs {
				ids = append(ids, j.ID)
			}
			return ids, next, err
		}},
		{"invocations", "MWkxNzcyNDQ2MjAwMDAwMDAwMDAwOjIwMjYwMzAyVDEwMTAwMFo", func(p store.Page) ([]string, string, error) {
			invs, next, err := s.Invocations(ctx, "replay/every5", p)
			var ids []string
			for _, inv := range invs {
				ids = append(ids, inv.ID)
			}
			return ids, next, err
		}},
	} {
		t.Run(tt.listing, func(t *testing.T) {
			_, cur, err := tt.page(store.Page{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if cur != tt.v1 {
				t.Errorf("the cursor after the first %s is %s, want %s: a changed cursor format needs a new version mark, and the old one still read", tt.listing, cur, tt.v1)
			}
			b, err := os.ReadFile(filepath.Join("testdata", "cursor", "v0-"+tt.listing+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := tt.page(store.Page{Limit: 10, Cursor: cur})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := tt.page(store.Page{Limit: 10, Cursor: strings.TrimSpace(string(b))})
			if err != nil {
				t.Fatalf("the previous release's cursor %s: %v", b, err)
			}
			if len(want) != 2 || !slices.Equal(got, want) {
				t.Errorf("after the previous release's cursor: %v; after this release's: %v (want 2)", got, want)
			}
		})
	}
	if _, _, err := s.Jobs(ctx, "replay", store.Page{Limit: 1, Cursor: "MWlyZXBsYXk"}); err == nil {
		t.Error("an invocations cursor was taken for a jobs listing")
	}
}
