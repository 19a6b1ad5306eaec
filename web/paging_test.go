package web_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
)

// pages follows next_cursor from path until the last page, and returns
// the ids of what listKey lists, page by page.
func (h *harness) pages(path, listKey string, limit int) [][]string {
	h.t.Helper()
	var out [][]string
	cursor := ""
	for range 100 {
		url := fmt.Sprintf("%s?limit=%d", path, limit)
		if cursor != "" {
			url += "&cursor=" + cursor
		}
		body := h.ok("GET", url, "", http.StatusOK)
		var ids []string
		for _, x := range get(body, listKey).([]any) {
			ids = append(ids, get(x, "id").(string))
		}
		out = append(out, ids)
		next, _ := get(body, "next_cursor").(string)
		if next == "" {
			return out
		}
		cursor = next
	}
	h.t.Fatal("more than 100 pages")
	return nil
}

func TestPagingVisitsEveryJobOnceInOrder(t *testing.T) {
	h := newHarness(t)
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("big/job-%02d", i)
		h.define(id, engine.Definition{Schedule: "0 0 * * *", Target: "noop"})
		want = append(want, id)
	}
	h.define("other/job", engine.Definition{Schedule: "0 0 * * *", Target: "noop"})
	got := h.pages("/api/v1/projects/big/jobs", "jobs", 3)
	if lens := []int{len(got[0]), len(got[1]), len(got[2])}; len(got) != 3 || !slices.Equal(lens, []int{3, 3, 1}) {
		t.Errorf("pages %v, want 3, 3 and 1 jobs", got)
	}
	if all := slices.Concat(got...); !slices.Equal(all, want) {
		t.Errorf("paged through %v, want %v", all, want)
	}
}

func TestPagingVisitsEveryInvocationOnceNewestFirst(t *testing.T) {
	h := newHarness(t)
	h.define("p/every-minute", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.runUntil(t0.Add(5*time.Minute + 30*time.Second))
	got := h.pages("/api/v1/projects/p/jobs/every-minute", "invocations", 2)
	want := []string{"20260302T100500Z", "20260302T100400Z", "20260302T100300Z", "20260302T100200Z", "20260302T100100Z"}
	if len(got) != 3 {
		t.Errorf("pages %v, want 3", got)
	}
	if all := slices.Concat(got...); !slices.Equal(all, want) {
		t.Errorf("paged through %v, want %v", all, want)
	}
	// Every page shows the job's latest invocation, not the page's first.
	body := h.ok("GET", "/api/v1/projects/p/jobs/every-minute?limit=2", "", http.StatusOK)
	next := get(body, "next_cursor").(string)
	body = h.ok("GET", "/api/v1/projects/p/jobs/every-minute?limit=2&cursor="+next, "", http.StatusOK)
	if got := get(body, "last_invocation", "id"); got != want[0] {
		t.Errorf("second page's last_invocation %v, want %s", got, want[0])
	}
}

// TestACursorOfThePreviousReleaseStillPages: testdata/cursor/v0-invocations.txt
// is a next_cursor release 313afd2 returned for replay/every5's
// invocations, after its 10:10 occurrence (no version mark); this release
// pages on from it as from its own cursor for the same row, so someone
// paging through an upgrade gets the next page, not a 400. This release's
// own cursor is pinned by its spelling.
func TestACursorOfThePreviousReleaseStillPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.define("replay/every5", engine.Definition{Schedule: "*/5 * * * *", Target: "noop"})
	h.runUntil(t0.Add(15*time.Minute + 30*time.Second))
	path := "/api/v1/projects/replay/jobs/every5"
	ids := func(body any) []string {
		var out []string
		for _, x := range get(body, "invocations").([]any) {
			out = append(out, get(x, "id").(string))
		}
		return out
	}
	body := h.ok("GET", path+"?limit=2", "", http.StatusOK)
	cur := get(body, "next_cursor").(string)
	// "1\x00invocations/replay/every5\x00" and the store's cursor.
	if want := "MQBpbnZvY2F0aW9ucy9yZXBsYXkvZXZlcnk1AE1Xa3hOemN5TkRRMk1qQXdNREF3TURBd01EQXdPakl3TWpZd016QXlWREV3TVRBd01Gbw"; cur != want {
		t.Errorf("next_cursor %s, want %s: a changed cursor format needs a new version mark, and the old one still read", cur, want)
	}
	old, err := os.ReadFile(filepath.Join("testdata", "cursor", "v0-invocations.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := ids(h.ok("GET", path+"?limit=10&cursor="+cur, "", http.StatusOK))
	got := ids(h.ok("GET", path+"?limit=10&cursor="+strings.TrimSpace(string(old)), "", http.StatusOK))
	if !slices.Equal(want, []string{"20260302T100500Z"}) || !slices.Equal(got, want) {
		t.Errorf("after the previous release's cursor %v, after this release's %v; want [20260302T100500Z]", got, want)
	}
}
