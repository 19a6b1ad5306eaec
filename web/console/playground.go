package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
)

type playgroundPage struct {
	Expr, Zone, Gap, Repeat, JobID string
	// Skip and Only are the days typed in (schedule.CalendarText), From and
	// Until the active window, MaxRuns the cap on runs: a job's context.
	Skip, Only, From, Until, MaxRuns string
	Explained                        string
	Upcoming                         upcoming
	Errs                             []string
}

// The calendars the playground's typed days make, named as the removed
// fire times' reasons say them ("on skipped days").
const (
	skipName = "skipped days"
	onlyName = "allowed days"
)

// playground explains a schedule typed in with the context a job gives
// it, and lists its next fire times with those its calendars, window, DST
// policy and cap remove: the code `sundial schedule explain --config`
// runs, before a config is committed.
func (c *console) playground(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r, "expr", "tz", "dst_gap", "dst_repeat", "job", "skip", "only", "from", "until", "max_runs"); err != nil {
		return err
	}
	q := r.URL.Query()
	page := playgroundPage{Expr: q.Get("expr"), Zone: q.Get("tz"), Gap: q.Get("dst_gap"), Repeat: q.Get("dst_repeat"), JobID: q.Get("job"),
		Skip: q.Get("skip"), Only: q.Get("only"), From: q.Get("from"), Until: q.Get("until"), MaxRuns: q.Get("max_runs")}
	if page.Expr != "" {
		page.Explained, page.Upcoming, page.Errs = explainTyped(page, c.Now())
	}
	status := http.StatusOK
	if len(page.Errs) > 0 {
		status = http.StatusBadRequest
	}
	c.renderTitled(w, r, v, status, "playground", "Schedule playground", []crumb{{Name: "Schedule playground"}}, page)
	return nil
}

// explainTyped reads what was typed, and says every mistake in it at
// once: a wrong zone does not hide a wrong expression. The expression is
// read in UTC when the zone cannot be.
func explainTyped(p playgroundPage, now time.Time) (string, upcoming, []string) {
	opts := schedule.Options{JobID: p.JobID}
	var errs []string
	var err error
	if p.Zone != "" {
		if opts.Location, err = schedule.LoadZone(p.Zone); err != nil {
			errs = append(errs, "time zone: "+err.Error())
		}
	}
	if opts.Gap, err = schedule.ParseGap(p.Gap); err != nil {
		errs = append(errs, "DST gap: "+err.Error())
	}
	if opts.Repeat, err = schedule.ParseRepeat(p.Repeat); err != nil {
		errs = append(errs, "DST repeat: "+err.Error())
	}
	loc := opts.Location
	if loc == nil {
		loc = time.UTC
	}
	if opts.Active, err = (engine.Window{From: strings.TrimSpace(p.From), Until: strings.TrimSpace(p.Until)}).Bounds(loc); err != nil {
		errs = append(errs, "active window: "+err.Error())
	}
	for _, typed := range []struct {
		label, name, text string
		to                *[]*schedule.Calendar
	}{{"days to skip", skipName, p.Skip, &opts.Skip}, {"days to run only on", onlyName, p.Only, &opts.Only}} {
		if strings.TrimSpace(typed.text) == "" {
			continue
		}
		cal, err := schedule.CalendarText(typed.name, typed.text)
		if err != nil {
			errs = append(errs, typed.label+": "+err.Error())
			continue
		}
		*typed.to = append(*typed.to, cal)
	}
	la := schedule.Lookahead{From: now, N: fireTimes}
	if m := strings.TrimSpace(p.MaxRuns); m != "" {
		n, err := strconv.ParseInt(m, 10, 64)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Sprintf("max_runs: %q: want a count of at least 1, or nothing for no cap", m))
		}
		la.Capped, la.RunsLeft = true, n
	}
	s, err := schedule.Parse(p.Expr, opts)
	if err != nil {
		errs = append(errs, "schedule: "+err.Error())
	}
	if len(errs) > 0 {
		return "", upcoming{}, errs
	}
	u := upcomingOf(s, la, noJitter)
	if la.Capped {
		u.Settings = append(u.Settings, field{"max_runs", fmt.Sprintf("%d scheduled runs from now", la.RunsLeft)})
	}
	return s.Explain(), u, nil
}
