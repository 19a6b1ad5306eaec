package console

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
)

// objectives is a job's objectives judged from the history the store
// keeps (slo.Evaluate).
type objectives struct {
	Words     []string // what the objectives promise, one line each
	Server    bool     // the server's defaults: the job's config says nothing of them
	Window    string
	From      time.Time
	Records   int  // the records judged
	Truncated bool // the window holds more than engine.JudgeCap records: the newest judged
	Kinds     []attainment
}

// attainment is one objective over its window, as a page shows it.
type attainment struct {
	Kind, Name  string
	Target      string
	Ratio       string
	Good, Total int
	Budget      string  // the error budget left, in words
	Left        float64 // the bar: percent of the budget left, 0 to 100
	Class       string  // ok; warn under a quarter left; fail when spent
	Met         bool    // the ratio reaches the target
}

// judgeJob is the job's objectives judged (engine.Judge), as a page
// shows them; nil for a job without objectives.
func (c *console) judgeJob(ctx context.Context, view engine.View, now time.Time) (*objectives, error) {
	j, ok, err := c.Engine.Judge(ctx, view, now)
	if !ok || err != nil {
		return nil, err
	}
	out := &objectives{Words: objectiveWords(j.Objective), Server: j.Defaults,
		Window: windowWords(j.Objective.Window), From: j.From, Records: j.Records, Truncated: j.Truncated}
	for _, a := range j.Attainments {
		out.Kinds = append(out.Kinds, showAttainment(a))
	}
	return out, nil
}

func objectiveWords(o slo.Objective) []string {
	var out []string
	if o.Lateness > 0 {
		out = append(out, fmt.Sprintf("%s of scheduled launches within %s of their time", slo.Percent(o.OnTime), schedule.ShortDuration(o.Lateness)))
	}
	if o.Success > 0 {
		out = append(out, fmt.Sprintf("%s of ended invocations succeed", slo.Percent(o.Success)))
	}
	return out
}

func windowWords(d time.Duration) string {
	if days := d / (24 * time.Hour); d%(24*time.Hour) == 0 && days != 1 {
		return fmt.Sprintf("%d days", days)
	}
	return roundDuration(d)
}

var kindNames = map[slo.Kind]string{slo.KindLateness: "On time", slo.KindSuccess: "Succeeded"}

func showAttainment(a slo.Attainment) attainment {
	out := attainment{Kind: string(a.Kind), Name: kindNames[a.Kind], Target: slo.Percent(a.Target), Good: a.Good, Total: a.Total, Met: a.Met()}
	out.Ratio = "—"
	if a.Total > 0 {
		out.Ratio = slo.RatioPercent(a.Ratio())
	}
	out.Budget, out.Left, out.Class = budgetWords(a.Budget())
	return out
}

// budgetWords says how much of an error budget is left: its words, the
// bar's width and its class.
func budgetWords(left float64) (string, float64, string) {
	switch {
	case left < 0:
		return fmt.Sprintf("spent, %.1f times over", 1-left), 0, "fail"
	case left == 0:
		return "spent", 0, "fail"
	}
	pct := math.Floor(left * 100)
	class := "ok"
	if left < 0.25 {
		class = "warn"
	}
	return fmt.Sprintf("%.0f%% left", pct), pct, class
}

// objectivesPage is a project's jobs against their objectives.
type objectivesPage struct {
	Project string
	Config  engine.Project
	Filter  jobsFilter
	States  []string
	Rows    []objectiveRow
	Totals  []projectAttainment
	// Without lists the jobs of the page that have no objectives.
	Without                     []objectiveRow
	Total, Matching, Page, Last int
	Prev, Next                  string
	Now                         time.Time
}

// objectiveRow is a job on the objectives page.
type objectiveRow struct {
	Name, URL, State string
	Obj              *objectives
	Unreadable       string
}

// projectAttainment is one kind of objective over the page's jobs: how
// many have it and how many miss it, and the budget their events spent
// together, each bad event weighted by its job's allowance as the
// metrics weigh it (sundial_slo_budget_spent_total).
type projectAttainment struct {
	Name          string
	Jobs, Missing int
	Good, Total   int
	Budget        string
	Left          float64
	Class         string
}

// objectivesOf is a project's objectives page: a row per job with its
// objectives, attainment and error budget left, judged from each job's
// history; the filters and pages of the jobs page.
func (c *console) objectivesOf(w http.ResponseWriter, r *http.Request, v viewer) error {
	project := r.PathValue("project")
	filter, err := parseJobsFilter(r)
	if err != nil {
		return err
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
	page := objectivesPage{Project: project, Config: p, Filter: filter, Now: now,
		Total: pick.total, Matching: pick.matching, Page: filter.Page, Last: pick.last, Prev: pick.prev, Next: pick.next}
	for _, st := range statemachine.States {
		page.States = append(page.States, string(st))
	}
	type sum struct {
		jobs, missing, good, total int
		spent                      float64
	}
	sums := map[slo.Kind]*sum{slo.KindLateness: {}, slo.KindSuccess: {}}
	for _, j := range pick.jobs {
		row := objectiveRow{Name: jobName(j.ID), URL: jobURL(j.ID), State: j.State}
		view, err := engine.Decode(j)
		if err != nil {
			row.Unreadable = err.Error()
			page.Rows = append(page.Rows, row)
			continue
		}
		if row.Obj, err = c.judgeJob(r.Context(), view, now); err != nil {
			return err
		}
		if row.Obj == nil {
			page.Without = append(page.Without, row)
			continue
		}
		page.Rows = append(page.Rows, row)
		o := c.Engine.Objective(&view.Definition)
		for _, a := range row.Obj.Kinds {
			s := sums[slo.Kind(a.Kind)]
			s.jobs++
			if !a.Met {
				s.missing++
			}
			s.good += a.Good
			s.total += a.Total
			target := o.Success
			if a.Kind == string(slo.KindLateness) {
				target = o.OnTime
			}
			s.spent += float64(a.Total-a.Good) / (1 - target)
		}
	}
	for _, k := range []slo.Kind{slo.KindLateness, slo.KindSuccess} {
		s := sums[k]
		if s.jobs == 0 {
			continue
		}
		left := 1.0
		if s.total > 0 {
			left = 1 - s.spent/float64(s.total)
		}
		t := projectAttainment{Name: kindNames[k], Jobs: s.jobs, Missing: s.missing, Good: s.good, Total: s.total}
		t.Budget, t.Left, t.Class = budgetWords(left)
		page.Totals = append(page.Totals, t)
	}
	c.renderTitled(w, r, v, http.StatusOK, "objectives", project+": objectives",
		[]crumb{{Name: project, URL: "/projects/" + url.PathEscape(project)}, {Name: "objectives"}}, page)
	return nil
}

// objectiveConfig writes a job's objectives as its config does; "" for
// none given.
func objectiveConfig(o slo.Objective) string {
	if o.None {
		return "none"
	}
	var parts []string
	if o.Lateness > 0 {
		parts = append(parts, "lateness: "+schedule.ShortDuration(o.Lateness))
	}
	if o.OnTime > 0 {
		parts = append(parts, "on_time: "+slo.Percent(o.OnTime))
	}
	if o.Success > 0 {
		parts = append(parts, "success: "+slo.Percent(o.Success))
	}
	if o.Window > 0 {
		parts = append(parts, "window: "+slo.FormatWindow(o.Window))
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
