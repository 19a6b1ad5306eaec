package console_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/sundial-cron/sundial/store"
)

// gridRows maps each job of a grid page to its cells, in column order.
func (p page) gridRows(t *testing.T) map[string][]*html.Node {
	t.Helper()
	rows := map[string][]*html.Node{}
	for _, table := range p.find("table", "class", "grid") {
		for _, tr := range findIn(table, "tr") {
			ths := findIn(tr, "th")
			if len(ths) == 0 || attr(ths[0], "scope") != "row" {
				continue
			}
			name := textOf(findIn(ths[0], "a")[0])
			rows[name] = findIn(tr, "td")
		}
	}
	return rows
}

// Over 6 hours (a column per 15 minutes) each occurrence of settle is a
// link to its invocation in the column of its time, coloured by its
// outcome, with its letter and, for a screen reader, its time, status
// and message; a slot without one is said to be empty.
func TestGridPlacesEachOccurrenceInItsColumn(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	p := s.get(t, admin, "/projects/payments/grid?span=6h&q=settle")
	if p.status != http.StatusOK {
		t.Fatalf("the grid: %d %s", p.status, p.text())
	}
	var starts []time.Time
	for _, th := range p.find("th", "class", "slot") {
		start, err := time.Parse(time.RFC3339, attr(findIn(th, "time")[0], "datetime"))
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, start)
	}
	if len(starts) != 24 || !starts[23].Add(15*time.Minute).After(s.now()) || starts[23].After(s.now()) {
		t.Fatalf("the columns start at %v; want 24 of 15 minutes, the last holding now (%s)", starts, s.now())
	}
	cells := p.gridRows(t)["settle"]
	if len(cells) != 24 {
		t.Fatalf("settle's row has %d cells, want 24", len(cells))
	}
	invs, _, err := s.st.Invocations(s.ctx, "payments/settle", store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]string, 24)
	for _, inv := range slices.Backward(invs) {
		if k := int(inv.Occurrence.Sub(starts[0]) / (15 * time.Minute)); !inv.Occurrence.Before(starts[0]) && k < 24 {
			want[k] = append(want[k], invPath("settle", inv.ID))
		}
	}
	seen := 0
	for k, td := range cells {
		var got []string
		for _, a := range findIn(td, "a") {
			got = append(got, attr(a, "href"))
			href := attr(a, "href")
			inv, err := s.st.Invocation(s.ctx, "payments/settle", href[strings.LastIndex(href, "/")+1:])
			if err != nil {
				t.Fatalf("a cell links %s: %v", attr(a, "href"), err)
			}
			words := textOf(a)
			if !strings.Contains(attr(a, "class"), map[string]string{"SUCCEEDED": "ok", "FAILED": "fail"}[inv.Status]) ||
				!strings.Contains(words, inv.Status) || !strings.Contains(words, inv.Occurrence.UTC().Format("2006-01-02 15:04:05 UTC")) {
				t.Errorf("the cell of %s is class %q saying %q", inv.ID, attr(a, "class"), words)
			}
			if inv.Status == "FAILED" && !strings.HasPrefix(words, "X ") {
				t.Errorf("a failed cell is not marked X: %q", words)
			}
			seen++
		}
		if !slices.Equal(got, want[k]) {
			t.Errorf("column %d (%s) links %v, want %v", k, starts[k].Format("15:04"), got, want[k])
		}
		if len(got) == 0 && !strings.Contains(attr(td, "class"), "none") {
			t.Errorf("column %d has no occurrence and is class %q", k, attr(td, "class"))
		}
	}
	if seen < 30 {
		t.Errorf("the grid links %d occurrences of settle in 6 hours, want its 36", seen)
	}
}

// Over 24 hours settle fires 6 times an hour, more than a cell shows one
// by one: a cell holds a part per outcome, the failures first, each with
// its count and a link to the newest of its kind; the hours older than
// the job's 100 newest occurrences are marked as not read, not drawn
// empty.
func TestGridSummarisesBusySlotsAndMarksWhatItDidNotRead(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	p := s.get(t, admin, "/projects/payments/grid?q=settle")
	cells := p.gridRows(t)["settle"]
	if len(cells) != 24 {
		t.Fatalf("settle's row has %d cells, want 24", len(cells))
	}
	invs, _, err := s.st.Invocations(s.ctx, "payments/settle", store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	oldest := invs[len(invs)-1].Occurrence
	unread, failedParts := 0, 0
	for _, td := range cells {
		links := findIn(td, "a")
		if strings.Contains(attr(td, "class"), "unread") {
			unread++
			if len(links) != 0 || !strings.Contains(attr(td, "title"), "not read") {
				t.Errorf("an unread slot holds %d links, says %q", len(links), attr(td, "title"))
			}
			continue
		}
		if len(links) == 0 || !strings.Contains(textOf(links[0]), "6 occurrences") {
			continue
		}
		total := 0
		for i, a := range links {
			var n int
			mark := textOf(findIn(a, "span")[0])
			fmt.Sscanf(strings.TrimLeft(mark, "X"), "%d", &n)
			total += n
			if strings.HasPrefix(mark, "X") {
				failedParts++
				if i != 0 || !strings.Contains(attr(a, "class"), "fail") || !strings.Contains(textOf(a), "opens the newest failed one") {
					t.Errorf("a slot's failures are part %d, class %q, saying %q; want the first, failed", i, attr(a, "class"), textOf(a))
				}
			}
		}
		if total != 6 {
			t.Errorf("a slot of 6 occurrences counts %d in its parts", total)
		}
	}
	// 100 occurrences every 10 minutes reach back 16 h 40 min: the 7
	// hours before are not read.
	wantUnread := 0
	for _, th := range p.find("th", "class", "slot") {
		start, _ := time.Parse(time.RFC3339, attr(findIn(th, "time")[0], "datetime"))
		if start.Before(oldest) {
			wantUnread++
		}
	}
	if unread != wantUnread || unread == 0 {
		t.Errorf("%d slots marked not read, want %d (those before %s)", unread, wantUnread, oldest)
	}
	if failedParts == 0 {
		t.Error("no slot of settle's links its failures")
	}
}

// The grid shows the viewer's jobs alone, with the jobs page's filters;
// a project it may not read does not exist; a window it does not offer
// is refused.
func TestGridShowsOnlyWhatTheViewerMayRead(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	rows := func(who, path string) []string {
		p := s.get(t, who, path)
		if p.status != http.StatusOK {
			t.Fatalf("%s as %s: %d %s", path, who, p.status, p.text())
		}
		var out []string
		for name := range p.gridRows(t) {
			out = append(out, name)
		}
		slices.Sort(out)
		return out
	}
	if got := rows(narrow, "/projects/payments/grid"); !slices.Equal(got, []string{"nightly-report"}) {
		t.Errorf("the narrow reader's grid has %v, want [nightly-report]", got)
	}
	if got := rows(admin, "/projects/payments/grid?state=PAUSED&span=7d"); !slices.Equal(got, []string{"reconcile"}) {
		t.Errorf("the paused jobs' grid has %v, want [reconcile]", got)
	}
	if p := s.get(t, narrow, "/projects/payments/grid"); strings.Contains(p.raw, "settle") {
		t.Error("the narrow reader's grid names settle")
	}
	for _, c := range []struct {
		who, path string
		want      int
	}{
		{narrow, "/projects/search/grid", http.StatusNotFound},
		{outsider, "/projects/payments/grid", http.StatusNotFound},
		{"", "/projects/payments/grid", http.StatusUnauthorized},
		{admin, "/projects/payments/grid?span=1y", http.StatusBadRequest},
		{admin, "/projects/payments/grid?span=6h&span=7d", http.StatusBadRequest},
	} {
		if p := s.get(t, c.who, c.path); p.status != c.want {
			t.Errorf("%s as %q: %d, want %d", c.path, c.who, p.status, c.want)
		}
	}
}
