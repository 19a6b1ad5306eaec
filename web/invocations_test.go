package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
)

// invocationsFixture runs, from 10:00 to 10:04:30, project p's jobs
// ok (noop, every minute: SUCCEEDED) and slow (async, every minute,
// overlap skip: RUNNING, then SKIPPED as overruns, its 10:01 aborted at
// 10:03:30), and projects pa (a name that starts with p's) and q, whose
// invocations no listing of p may show. Every status class has records.
func invocationsFixture(t *testing.T) *harness {
	h := newHarness(t)
	h.define("p/ok", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.define("p/slow", engine.Definition{Schedule: "* * * * *", Target: "async"})
	h.define("pa/x", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.define("q/y", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.runUntil(t0.Add(3*time.Minute + 30*time.Second))
	h.ok("POST", "/api/v1/projects/p/jobs/slow/abort", "", http.StatusOK)
	h.runUntil(t0.Add(4*time.Minute + 30*time.Second))
	return h
}

// stored is what the store holds of p's jobs, newest first, as "job id"
// keys, keeping the records keep picks.
func (h *harness) stored(jobs []string, keep func(*store.InvocationRecord) bool) []string {
	h.t.Helper()
	var all []*store.InvocationRecord
	for _, j := range jobs {
		invs, _, err := h.st.Invocations(h.ctx, j, store.Page{Limit: 1000})
		if err != nil {
			h.t.Fatal(err)
		}
		all = append(all, invs...)
	}
	slices.SortStableFunc(all, func(a, b *store.InvocationRecord) int {
		if c := b.Occurrence.Compare(a.Occurrence); c != 0 {
			return c
		}
		return strings.Compare(b.JobID+" "+b.ID, a.JobID+" "+a.ID)
	})
	var out []string
	for _, inv := range all {
		if keep(inv) {
			out = append(out, inv.JobID+" "+inv.ID)
		}
	}
	return out
}

// listAll pages through path?query with limit, as r's caller, and returns
// the listed "job id" keys and each page's size.
func (h *harness) listAll(r req, query string, limit int) (keys []string, sizes []int) {
	h.t.Helper()
	cursor := ""
	for range 100 {
		u := fmt.Sprintf("%s?limit=%d", r.path, limit)
		if query != "" {
			u += "&" + query
		}
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		rr := r
		rr.method, rr.path = "GET", u
		a := h.do(rr)
		if a.status != http.StatusOK {
			h.t.Fatalf("GET %s: %d %s", u, a.status, a.raw)
		}
		list := get(a.body, "invocations").([]any)
		sizes = append(sizes, len(list))
		for _, x := range list {
			keys = append(keys, get(x, "job_id").(string)+" "+get(x, "id").(string))
			if get(x, "job") == nil || get(x, "status") == nil || get(x, "occurrence") == nil {
				h.t.Errorf("GET %s lists %v; want its job, status and occurrence", u, x)
			}
		}
		if cursor, _ = get(a.body, "next_cursor").(string); cursor == "" {
			return keys, sizes
		}
	}
	h.t.Fatal("more than 100 pages")
	return nil, nil
}

// TestAProjectsInvocationsAreListedNewestFirstByStatusAndTime: the listing
// holds every record of the project's jobs, newest occurrence first, a
// page at a time without gaps or repeats; status keeps one class, since
// an age or a time on; a job's listing its own; and no listing shows
// another project's records.
func TestAProjectsInvocationsAreListedNewestFirstByStatusAndTime(t *testing.T) {
	h := invocationsFixture(t)
	jobs := []string{"p/ok", "p/slow"}
	all := func(*store.InvocationRecord) bool { return true }
	for _, limit := range []int{1, 3, 50} {
		if got, _ := h.listAll(req{path: "/api/v1/projects/p/invocations"}, "", limit); !slices.Equal(got, h.stored(jobs, all)) {
			t.Errorf("limit %d lists %q\nwant %q", limit, got, h.stored(jobs, all))
		}
	}
	for _, class := range store.StatusClasses {
		want := h.stored(jobs, func(inv *store.InvocationRecord) bool { return store.StatusClass(inv.Status) == class })
		if len(want) == 0 {
			t.Fatalf("the fixture has no %s record", class)
		}
		if got, _ := h.listAll(req{path: "/api/v1/projects/p/invocations"}, "status="+class, 2); !slices.Equal(got, want) {
			t.Errorf("status=%s lists %q\nwant %q", class, got, want)
		}
		if got, _ := h.listAll(req{path: "/api/v1/projects/p/invocations"}, "status="+strings.ToUpper(class), 2); !slices.Equal(got, want) {
			t.Errorf("status=%s lists %q\nwant %q", strings.ToUpper(class), got, want)
		}
	}
	// The clock is at 10:04:30: 150s ago is 10:02:00, an occurrence.
	from := t0.Add(2 * time.Minute)
	recent := h.stored(jobs, func(inv *store.InvocationRecord) bool { return !inv.Occurrence.Before(from) })
	for _, since := range []string{"150s", "2m30s", "2026-03-02T10:02:00Z", "2026-03-02T11:02:00%2B01:00"} {
		if got, _ := h.listAll(req{path: "/api/v1/projects/p/invocations"}, "since="+since, 2); !slices.Equal(got, recent) {
			t.Errorf("since=%s lists %q\nwant %q", since, got, recent)
		}
	}
	if got, _ := h.listAll(req{path: "/api/v1/projects/p/invocations"}, "since=1d&status=succeeded", 2); !slices.Equal(got, h.stored([]string{"p/ok"}, all)) {
		t.Errorf("since=1d&status=succeeded lists %q; want every record of p/ok", got)
	}
	slow := h.stored([]string{"p/slow"}, all)
	if got, _ := h.listAll(req{path: "/api/v1/projects/p/jobs/slow/invocations"}, "", 2); !slices.Equal(got, slow) {
		t.Errorf("the job's listing is %q\nwant %q", got, slow)
	}
	if got, _ := h.listAll(req{path: "/api/v1/projects/pa/invocations"}, "", 100); !slices.Equal(got, h.stored([]string{"pa/x"}, all)) {
		t.Errorf("project pa lists %q; want pa/x's records alone", got)
	}
}

// TestAnAgeCountsFromTheFirstPage: the next pages of "the last 150s" are
// of the same 150 seconds, however late they are asked for.
func TestAnAgeCountsFromTheFirstPage(t *testing.T) {
	h := invocationsFixture(t)
	first := h.ok("GET", "/api/v1/projects/p/invocations?since=150s&limit=1", "", http.StatusOK)
	var keys []string
	for body := first; ; {
		for _, x := range get(body, "invocations").([]any) {
			keys = append(keys, get(x, "job_id").(string)+" "+get(x, "id").(string))
		}
		next, _ := get(body, "next_cursor").(string)
		if next == "" {
			break
		}
		h.set(h.clock().Add(time.Minute))
		body = h.ok("GET", "/api/v1/projects/p/invocations?since=150s&limit=1&cursor="+url.QueryEscape(next), "", http.StatusOK)
	}
	want := h.stored([]string{"p/ok", "p/slow"}, func(inv *store.InvocationRecord) bool { return !inv.Occurrence.Before(t0.Add(2 * time.Minute)) })
	if !slices.Equal(keys, want) {
		t.Errorf("paged through %q\nwant %q", keys, want)
	}
}

// TestTheInvocationListingRefusesWhatItCannotServe: a status, since or
// parameter it does not know, and a cursor of another listing or of the
// same listing under another filter, are 400 with what is wanted;
// a project or job that does not exist is 404.
func TestTheInvocationListingRefusesWhatItCannotServe(t *testing.T) {
	h := invocationsFixture(t)
	succeededCursor := get(h.ok("GET", "/api/v1/projects/p/invocations?status=succeeded&limit=1", "", 200), "next_cursor")
	anyCursor := get(h.ok("GET", "/api/v1/projects/p/invocations?limit=1", "", 200), "next_cursor")
	jobsCursor := get(h.ok("GET", "/api/v1/projects/p/jobs?limit=1", "", 200), "next_cursor")
	jobCursor := get(h.ok("GET", "/api/v1/projects/p/jobs/ok?limit=1", "", 200), "next_cursor")
	if succeededCursor == nil || anyCursor == nil || jobsCursor == nil || jobCursor == nil {
		t.Fatal("a first page without a next cursor")
	}
	for _, tc := range []struct{ path, want string }{
		{"/api/v1/projects/p/invocations?status=broken", `status \"broken\": want one of failed, running, succeeded, skipped`},
		{"/api/v1/projects/p/invocations?since=yesterday", `since \"yesterday\": want an age (90m, 24h, 7d) or a time in RFC 3339`},
		{"/api/v1/projects/p/invocations?since=-5m", `since \"-5m\"`},
		{"/api/v1/projects/p/invocations?state=failed", `unknown query parameter \"state\": this route takes status, since, limit, cursor`},
		{"/api/v1/projects/p/invocations?cursor=" + url.QueryEscape(jobsCursor.(string)), "is not a cursor of this listing"},
		{"/api/v1/projects/p/jobs/ok/invocations?cursor=" + url.QueryEscape(jobCursor.(string)), "is not a cursor of this listing"},
		{"/api/v1/projects/p/invocations?status=running&cursor=" + url.QueryEscape(succeededCursor.(string)), "is not a cursor of this listing"},
		{"/api/v1/projects/p/jobs/ok/invocations?cursor=" + url.QueryEscape(anyCursor.(string)), "is not a cursor of this listing"},
		{"/api/v1/projects/q/invocations?cursor=" + url.QueryEscape(anyCursor.(string)), "is not a cursor of this listing"},
		{"/api/v1/projects/p/invocations?cursor=bm9uc2Vuc2U", "is not a cursor of this listing"},
	} {
		before := h.snapshot()
		a := h.do(req{method: "GET", path: tc.path})
		if a.status != http.StatusBadRequest || !strings.Contains(a.raw, tc.want) {
			t.Errorf("GET %s: %d %s; want 400 saying %s", tc.path, a.status, a.raw, tc.want)
		}
		h.unchanged(before, "GET "+tc.path)
	}
	for _, path := range []string{"/api/v1/projects/nosuch/invocations", "/api/v1/projects/p/jobs/nosuch/invocations"} {
		if a := h.do(req{method: "GET", path: path}); a.status != http.StatusNotFound {
			t.Errorf("GET %s: %d %s; want 404", path, a.status, a.raw)
		}
	}
}

// TestTheInvocationListingShowsOnlyJobsTheCallerMayRead: an owner of one
// job of billing lists that job's invocations alone across the project,
// with short or empty pages and a next cursor all the same.
func TestTheInvocationListingShowsOnlyJobsTheCallerMayRead(t *testing.T) {
	h := rolesFixture(t, false)
	bob := req{path: "/api/v1/projects/billing/invocations", remote: true, header: http.Header{"X-Test-Identity": {"user:bob@example.com"}}}
	got, sizes := h.listAll(bob, "", 1)
	if want := h.stored([]string{"billing/worker"}, func(*store.InvocationRecord) bool { return true }); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("bob lists %q; want billing/worker's records %q alone", got, want)
	}
	if !slices.Contains(sizes, 0) {
		t.Errorf("page sizes %v; want some empty ones, where billing/nightly's records were", sizes)
	}
	alice := bob
	alice.header = http.Header{"X-Test-Identity": {"user:alice@example.com"}}
	if got, _ := h.listAll(alice, "", 100); !slices.Equal(got, h.stored([]string{"billing/nightly", "billing/worker"}, func(*store.InvocationRecord) bool { return true })) {
		t.Errorf("a reader of billing lists %q; want every job's records", got)
	}
}
