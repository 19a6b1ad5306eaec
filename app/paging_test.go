package app_test

import (
	"fmt"
	"net/http"
	"slices"
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
