package console

import (
	"net/http"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

type playgroundPage struct {
	Expr, Zone, Gap, Repeat, JobID string
	Explained                      string
	Fires                          []fireTime
	Errs                           []string
}

// playground explains a schedule typed in, and lists its next fire times
// with DST transitions called out: the code `sundial schedule explain`
// runs, before a config is committed.
func (c *console) playground(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r, "expr", "tz", "dst_gap", "dst_repeat", "job"); err != nil {
		return err
	}
	q := r.URL.Query()
	page := playgroundPage{Expr: q.Get("expr"), Zone: q.Get("tz"), Gap: q.Get("dst_gap"), Repeat: q.Get("dst_repeat"), JobID: q.Get("job")}
	if page.Expr != "" {
		page.Explained, page.Fires, page.Errs = explainTyped(page, c.Now())
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
func explainTyped(p playgroundPage, now time.Time) (string, []fireTime, []string) {
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
	s, err := schedule.Parse(p.Expr, opts)
	if err != nil {
		errs = append(errs, "schedule: "+err.Error())
	}
	if len(errs) > 0 {
		return "", nil, errs
	}
	return s.Explain(), nextFires(s, now, fireTimes), nil
}
