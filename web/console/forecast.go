package console

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/forecast"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// forecastHorizon is how far ahead the load forecast looks, a minute at
// a time.
const forecastHorizon = 24 * time.Hour

// forecastPage is the launches per minute over the next day, of every
// job the viewer may read (or of one project's), and per project.
type forecastPage struct {
	Project string // the page's filter; "" for every project
	From    time.Time
	// Jobs are the jobs forecast; Paused those left out until they
	// resume (or for the whole day), Off those DISABLED or unreadable.
	Jobs, Paused, Off int
	Load              loadChart
	Projects          []forecastProject
}

// forecastProject is a project's line: its launches over the day, its
// busiest minute, and a small chart of them.
type forecastProject struct {
	ID    string
	Jobs  int
	Load  loadChart
	Total int
}

// forecastPage's charts, in the SVG's own units.
const (
	loadWidth   = 1200
	loadHeight  = 240
	loadLeft    = 64
	loadTop     = 24 // room for the peak's label
	loadBottom  = 208
	sparkWidth  = 288
	sparkHeight = 32
)

// loadChart is a day's launches per minute as an area, with its scale,
// the hours under it and its busiest minute marked.
type loadChart struct {
	Width, Height, Left, Bottom int
	TickY, LabelY               int    // the hours' ticks end and their labels sit
	Area                        string // the path's d
	Grid                        []gridline
	Hours                       []hourTick
	Total, Peak                 int
	PeakAt                      time.Time
	PeakX, PeakY                float64
	PeakLabel                   string
	PeakMinute                  string // "14:05 UTC"
	PeakAnchor                  string // where the label hangs: start, or end near the right edge
}

// hourTick is an hour labelled under the chart.
type hourTick struct {
	X     float64
	Label string
}

// loadForecast shows the launches per minute over the next 24 hours that
// the schedules of the jobs the viewer may read make, for the whole
// server and per project (?project= narrows it to one), with each busiest
// minute named, so that an operator sees a herd before it comes. A
// PAUSED job counts from when its pause ends, if it ends within the day;
// a DISABLED one not at all.
func (c *console) loadForecast(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r, "project"); err != nil {
		return err
	}
	ctx := r.Context()
	page := forecastPage{Project: r.URL.Query().Get("project"), From: c.Now().UTC().Truncate(time.Minute)}
	byProject := map[string][]forecast.Job{}
	seen := map[string]bool{}
	scan := func(j *store.JobRecord) error {
		seen[j.Project] = true
		job, ok := c.forecastJob(j, page.From, &page)
		if ok {
			byProject[j.Project] = append(byProject[j.Project], job)
		}
		return nil
	}
	if page.Project != "" {
		_, grants, err := c.project(ctx, v, page.Project)
		if err != nil {
			return err
		}
		seen[page.Project] = true
		if err := c.projectJobs(ctx, v, page.Project, grants, scan); err != nil {
			return err
		}
	} else {
		records, err := c.visibleJobs(ctx, v, scan)
		if err != nil {
			return err
		}
		for id := range records {
			seen[id] = true
		}
	}
	all := make([]int, int(forecastHorizon/time.Minute))
	for _, id := range slices.Sorted(maps.Keys(seen)) {
		l := forecast.Count(byProject[id], page.From, forecastHorizon, time.Minute)
		for i, n := range l.Counts {
			all[i] += n
		}
		page.Jobs += len(byProject[id])
		page.Projects = append(page.Projects, forecastProject{ID: id, Jobs: len(byProject[id]), Total: l.Total(),
			Load: drawLoad(l, sparkWidth, sparkHeight, 0, 2, sparkHeight-2)})
	}
	page.Load = drawLoad(forecast.Load{Start: page.From, Step: time.Minute, Counts: all}, loadWidth, loadHeight, loadLeft, loadTop, loadBottom)
	crumbs := []crumb{{Name: "Forecast"}}
	if page.Project != "" {
		crumbs = []crumb{{Name: "Forecast", URL: "/forecast"}, {Name: page.Project}}
	}
	c.renderTitled(w, r, v, http.StatusOK, "forecast", "Load forecast", crumbs, page)
	return nil
}

// forecastJob is a job as the forecast counts it, and false for one it
// leaves out (counted in page).
func (c *console) forecastJob(j *store.JobRecord, from time.Time, page *forecastPage) (forecast.Job, bool) {
	view, err := engine.Decode(j)
	if err != nil || view.State.State == statemachine.Disabled {
		page.Off++
		return forecast.Job{}, false
	}
	job, err := forecast.Of(j.ID, &view.Definition)
	if err != nil {
		page.Off++ // a schedule that no longer parses: the job page says why
		return forecast.Job{}, false
	}
	// A jittered job's launches are counted at their occurrences: its
	// own delays are a hash a launch apiece (10,000 every-minute jobs
	// took 5 s of a request), where jobs alike are counted once, and a
	// minute's bar moves by at most the jitter.
	job.Jitter = 0
	if view.State.State == statemachine.Paused {
		page.Paused++
		until := view.State.PausedUntil
		if until.IsZero() || !until.Before(from.Add(forecastHorizon)) {
			return forecast.Job{}, false
		}
		job.NotBefore = until
	}
	return job, true
}

// drawLoad charts a load as an area over [left, width) between top and
// bottom, with a count scale when left leaves room for it, and the hours
// under it when the chart is tall enough to hold them.
func drawLoad(l forecast.Load, width, height, left, top, bottom int) loadChart {
	ch := loadChart{Width: width, Height: height, Left: left, Bottom: bottom, TickY: bottom + 5, LabelY: bottom + 22, Total: l.Total()}
	ch.PeakAt, ch.Peak = l.Peak()
	n := len(l.Counts)
	if n == 0 {
		return ch
	}
	// The scale's top is the first multiple of a round step at or
	// above the peak, so a peak of 63 reaches most of the way up.
	step := countScale(max((ch.Peak+3)/4, 1))
	scaleTop := max((ch.Peak+step-1)/step*step, step)
	plotW, plotH := float64(width-left), float64(bottom-top)
	x := func(i int) float64 { return float64(left) + plotW*float64(i)/float64(n) }
	y := func(c int) float64 { return float64(bottom) - plotH*float64(c)/float64(scaleTop) }
	var d strings.Builder
	fmt.Fprintf(&d, "M%d %d", left, bottom)
	for i, c := range l.Counts {
		// A step per minute: each minute's count is flat across it.
		fmt.Fprintf(&d, "L%.1f %.1f L%.1f %.1f", x(i), y(c), x(i+1), y(c))
	}
	fmt.Fprintf(&d, "L%d %dZ", width, bottom)
	ch.Area = d.String()
	if left > 0 {
		for c := step; c <= scaleTop; c += step {
			ch.Grid = append(ch.Grid, gridline{Y: y(c), Label: fmt.Sprint(c)})
		}
		for i := range n {
			t := l.Start.Add(time.Duration(i) * l.Step)
			if t.Minute() == 0 && t.Hour()%3 == 0 {
				label := t.UTC().Format("15:04")
				if len(ch.Hours) == 0 {
					label += " UTC"
				}
				ch.Hours = append(ch.Hours, hourTick{X: x(i), Label: label})
			}
		}
	}
	if ch.Peak > 0 {
		i := int(ch.PeakAt.Sub(l.Start) / l.Step)
		ch.PeakX, ch.PeakY = (x(i)+x(i+1))/2, y(ch.Peak)
		ch.PeakMinute = ch.PeakAt.UTC().Format("15:04 UTC")
		ch.PeakLabel = fmt.Sprintf("%d at %s", ch.Peak, ch.PeakMinute)
		ch.PeakAnchor = "start"
		if ch.PeakX > float64(width)*0.8 {
			ch.PeakAnchor = "end"
		}
	}
	return ch
}

// countScale is the smallest of 1, 2, 5, 10, 20, 50, ... at or above n.
func countScale(n int) int {
	for s := 1; ; s *= 10 {
		for _, m := range []int{1, 2, 5} {
			if s*m >= n {
				return s * m
			}
		}
	}
}
