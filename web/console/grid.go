package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// gridSpan is one window of the grid: how far back it reaches, and the
// slot of time each column covers.
type gridSpan struct {
	span, slot     time.Duration
	name, slotName string
	// day labels the columns with the weekday as well as the time.
	day bool
}

// gridSpans are the grid's windows, by their name in ?span=, in the order
// the page offers them.
var gridSpans = []gridSpan{
	{span: 6 * time.Hour, slot: 15 * time.Minute, name: "6h", slotName: "15 minutes"},
	{span: 24 * time.Hour, slot: time.Hour, name: "24h", slotName: "hour"},
	{span: 7 * 24 * time.Hour, slot: 6 * time.Hour, name: "7d", slotName: "6 hours", day: true},
}

// Bounds of the grid: a page of jobsPerPage rows, each from the job's
// gridDepth newest invocations, read for the whole page in one
// Store.Recent; a slot holding more than maxSegments occurrences shows a
// segment per outcome, with its count (summarise).
const (
	gridDepth   = store.MaxRecent
	maxSegments = 4
)

type gridPage struct {
	Project  string
	Config   engine.Project
	Filter   jobsFilter
	States   []string
	Spans    []spanTab
	SlotName string
	Columns  []gridColumn
	Rows     []gridRow
	// As on the jobs page: the viewer's jobs, those the filter passes,
	// the page and its neighbours.
	Total, Matching, Page, Last int
	Prev, Next                  string
	Depth                       int
	Now                         time.Time
}

func (gridPage) refreshes() {}

// spanTab is a link to the grid over another window.
type spanTab struct {
	Name, URL string
	Current   bool
}

// gridColumn is one slot of time, named by its start.
type gridColumn struct {
	Start time.Time
	Label string
	Day   bool // the label names the weekday too
}

// gridRow is a job's line of the grid.
type gridRow struct {
	Name, URL, State string
	Cells            []gridCell
	Unreadable       string // why the job's record cannot be read
}

// gridCell is a job's occurrences in one slot.
type gridCell struct {
	Class string // "none" for no occurrence, "unread" for a slot older than those read
	Segs  []gridSeg
	Words string // what an empty or unread cell says, to a screen reader and on hover
}

// gridSeg is one link of a cell: an occurrence, or in a slot of many the
// newest of an outcome, with how many had it.
type gridSeg struct {
	Class, Mark, URL, Title string
}

// grid is a project's jobs against time, as Airflow's grid draws a DAG's
// tasks against its runs: a row per job, a column per slot of the window
// (?span=6h, 24h or 7d), each occurrence a cell coloured by its outcome,
// marked with a letter, described in words and linked to its invocation.
// It takes the jobs page's filters and pages.
func (c *console) grid(w http.ResponseWriter, r *http.Request, v viewer) error {
	project := r.PathValue("project")
	filter, err := parseJobsFilter(r, "span")
	if err != nil {
		return err
	}
	filter.Span = r.URL.Query().Get("span")
	sp, ok := spanNamed(filter.Span)
	if !ok {
		return badRequest("span %q: want 6h, 24h or 7d", filter.Span)
	}
	if filter.Span == "24h" {
		filter.Span = "" // the default: links need not say it
	}
	p, grants, err := c.project(r.Context(), v, project)
	if err != nil {
		return err
	}
	pick, err := c.pickJobs(r, v, project, grants, filter)
	if err != nil {
		return err
	}
	now := c.Now()
	page := gridPage{Project: project, Config: p, Filter: filter, SlotName: sp.slotName, Depth: gridDepth, Now: now,
		Total: pick.total, Matching: pick.matching, Page: filter.Page, Last: pick.last, Prev: pick.prev, Next: pick.next}
	for _, st := range statemachine.States {
		page.States = append(page.States, string(st))
	}
	for _, o := range gridSpans {
		f := filter
		f.Page, f.Span = 1, o.name
		if o.name == "24h" {
			f.Span = ""
		}
		page.Spans = append(page.Spans, spanTab{Name: o.name, URL: "/projects/" + url.PathEscape(project) + "/grid" + f.query(1), Current: o.name == sp.name})
	}
	// Slots end on multiples of their length, the last one holding now.
	n := int(sp.span / sp.slot)
	from := now.Truncate(sp.slot).Add(sp.slot).Add(-sp.span)
	for i := range n {
		start := from.Add(time.Duration(i) * sp.slot)
		label := start.UTC().Format("15:04")
		if sp.day {
			label = start.UTC().Format("Mon 15:04")
		}
		page.Columns = append(page.Columns, gridColumn{Start: start, Label: label, Day: sp.day})
	}
	recent, err := c.Store.Recent(r.Context(), pick.ids(), gridDepth)
	if err != nil {
		return err
	}
	for _, j := range pick.jobs {
		row := gridRow{Name: jobName(j.ID), URL: jobURL(j.ID), State: j.State}
		if _, err := engine.Decode(j); err != nil {
			row.Unreadable = err.Error()
		} else {
			row.Cells = gridCells(j.ID, recent[j.ID], from, sp.slot, n)
		}
		page.Rows = append(page.Rows, row)
	}
	c.renderTitled(w, r, v, http.StatusOK, "grid", project+" grid",
		[]crumb{{Name: project, URL: "/projects/" + url.PathEscape(project)}, {Name: "Grid"}}, page)
	return nil
}

func spanNamed(name string) (gridSpan, bool) {
	if name == "" {
		name = "24h"
	}
	for _, s := range gridSpans {
		if s.name == name {
			return s, true
		}
	}
	return gridSpan{}, false
}

// gridCells places a job's newest invocations (newest first, at most
// gridDepth) in the n slots from from. A job that has gridDepth of them
// may have more, older: the slots before the oldest read are marked as
// not read rather than drawn empty.
func gridCells(jobID string, invs []*store.InvocationRecord, from time.Time, slot time.Duration, n int) []gridCell {
	buckets := make([][]*store.InvocationRecord, n)
	for i := len(invs) - 1; i >= 0; i-- {
		inv := invs[i]
		if inv.Occurrence.Before(from) {
			continue
		}
		k := min(int(inv.Occurrence.Sub(from)/slot), n-1)
		buckets[k] = append(buckets[k], inv)
	}
	var readFrom time.Time
	if len(invs) >= gridDepth {
		readFrom = invs[len(invs)-1].Occurrence
	}
	cells := make([]gridCell, n)
	for k, b := range buckets {
		start := from.Add(time.Duration(k) * slot)
		when := utcSecond(start) + " to " + utcSecond(start.Add(slot))
		switch {
		case start.Before(readFrom):
			cells[k] = gridCell{Class: "unread", Words: when + ": not read (the grid reads each job's " + fmt.Sprint(gridDepth) + " newest occurrences; the job's page has them all)"}
		case len(b) == 0:
			cells[k] = gridCell{Class: "none", Words: when + ": no occurrence"}
		case len(b) <= maxSegments:
			for _, inv := range b {
				cells[k].Segs = append(cells[k].Segs, gridSeg{Class: outcome(inv.Status), Mark: letter(inv), URL: invocationURL(jobID, inv.ID), Title: describe(inv)})
			}
		default:
			cells[k].Segs = summarise(jobID, b, when)
		}
	}
	return cells
}

// summarise draws a slot of more than maxSegments occurrences (oldest
// first) as a segment per outcome, the one that matters most first
// (failed, aborted, running, skipped, succeeded): each says how many, and
// links to the newest of them.
func summarise(jobID string, invs []*store.InvocationRecord, when string) []gridSeg {
	newest := map[string]*store.InvocationRecord{}
	count := map[string]int{}
	for _, inv := range invs {
		o := outcome(inv.Status)
		newest[o] = inv
		count[o]++
	}
	var segs []gridSeg
	for _, o := range []string{"fail", "abort", "run", "skip", "ok"} {
		inv := newest[o]
		if inv == nil {
			continue
		}
		segs = append(segs, gridSeg{Class: o, Mark: fmt.Sprintf("%s%d", letter(inv), count[o]), URL: invocationURL(jobID, inv.ID),
			Title: fmt.Sprintf("%s: %s; this link opens the newest %s one: %s", when, tally(invs), strings.ToLower(inv.Status), describe(inv))})
	}
	return segs
}

// tally says how many occurrences of each status a slot holds.
func tally(invs []*store.InvocationRecord) string {
	var order []string
	counts := map[string]int{}
	for _, inv := range invs {
		if counts[inv.Status] == 0 {
			order = append(order, inv.Status)
		}
		counts[inv.Status]++
	}
	parts := make([]string, 0, len(order))
	for _, st := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], strings.ToLower(st)))
	}
	return fmt.Sprintf("%d occurrences: %s", len(invs), strings.Join(parts, ", "))
}
