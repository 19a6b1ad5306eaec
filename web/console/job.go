package console

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Sizes of the job page.
const (
	historyPerPage = 25
	fireTimes      = 10
	// timelineCap bounds the invocations a timeline reads: a job firing
	// every minute has 10,080 occurrences in 7 days; the timeline says
	// when it shows only the newest.
	timelineCap = 2000
)

// spans are the timeline's windows, by their name in ?span=.
var spans = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}

type jobPage struct {
	jobRow
	Project    string
	Config     engine.Project
	Definition []field
	Spec       string
	Upcoming   upcoming
	Resumes    *moment // when a pause with an end resumes the job by itself
	FireErr    string
	Timeline   timeline
	Durations  durations
	Active     []active
	Backfill   *backfillView // the backfill under way, if any
	Objectives *objectives   // nil for a job without objectives
	Audit      []engine.AuditEntry
	History    []historyRow
	NextPage   string // the link to older invocations; "" at the end
	Newest     bool   // the history shows the newest invocations
	Done       string // what the viewer's last action did
	May        mayDo
	Now        time.Time
}

func (jobPage) refreshes() {}

// mayDo says which buttons the viewer sees.
type mayDo struct {
	Trigger, Pause, Resume, Abort bool
	// Backfill is the backfill form (disabled while one is under way),
	// CancelBackfill the button that stops the one under way.
	Backfill, CancelBackfill bool
}

// field is one line of a definition.
type field struct{ Name, Value string }

// active is an invocation that has not ended.
type active struct {
	ID, URL, Phase string
	Occurrence     time.Time
	Attempt        int
	Since          *moment
	Backfill       bool
}

// historyRow is one invocation in the history table.
type historyRow struct {
	Inv      *store.InvocationRecord
	URL      string
	Class    string
	Duration string
	Late     string
	Skip     string // what a skip record's reason means
}

// fireTime is one coming occurrence; Note calls out a DST transition
// between it and the one before.
type fireTime struct {
	T    time.Time
	Zone string // the time in the schedule's zone
	Note string
}

// job is a job's page.
func (c *console) job(w http.ResponseWriter, r *http.Request, v viewer) error {
	project, name := r.PathValue("project"), r.PathValue("job")
	if err := checkQuery(r, "span", "before", "done"); err != nil {
		return err
	}
	q := r.URL.Query()
	spanName := q.Get("span")
	if spanName == "" {
		spanName = "24h"
	}
	span, ok := spans[spanName]
	if !ok {
		return badRequest("span %q: want 24h or 7d", spanName)
	}
	var cursor string
	if s := q.Get("before"); s != "" {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) == 0 {
			return badRequest("before %q is not a link this page made", s)
		}
		cursor = string(b)
	}
	view, grants, err := c.jobView(r.Context(), v, project, name)
	if err != nil {
		return err
	}
	ctx, now := r.Context(), c.Now()
	p, _, err := c.Engine.Project(ctx, project)
	if err != nil {
		return err
	}
	// The timeline's window, newest first, with a page at least for the
	// strip and the duration chart.
	var recent []*store.InvocationRecord
	truncated := false
	for pg := (store.Page{Limit: store.MaxLimit}); ; {
		invs, next, err := c.Store.Invocations(ctx, view.Job.ID, pg)
		if err != nil {
			return err
		}
		recent = append(recent, invs...)
		if next == "" || len(invs) == 0 || invs[len(invs)-1].Occurrence.Before(now.Add(-span)) {
			break
		}
		if len(recent) >= timelineCap {
			truncated = true
			break
		}
		pg.Cursor = next
	}
	hist, next, err := c.Store.Invocations(ctx, view.Job.ID, store.Page{Limit: historyPerPage, Cursor: cursor})
	if errors.Is(err, store.ErrInvalidCursor) {
		return badRequest("before %q is not a link this page made", q.Get("before"))
	}
	if err != nil {
		return err
	}
	page := jobPage{
		jobRow:  c.row(view, recent[:min(len(recent), stripLen)], now),
		Project: project, Config: p,
		Definition: definitionFields(view.Definition), Spec: prettyJSON(view.Definition.Spec),
		Timeline:  drawTimeline(view.Job.ID, recent, now, span, spanName, truncated),
		Durations: drawDurations(view.Job.ID, recent),
		Audit:     view.Audit, Newest: cursor == "", Done: doneText[q.Get("done")], Now: now,
	}
	if view.State.State == statemachine.Paused {
		page.Resumes = at(view.State.PausedUntil, now)
	}
	if next != "" {
		page.NextPage = "?before=" + base64.RawURLEncoding.EncodeToString([]byte(next))
	}
	s, err := view.Definition.Parse(view.Job.ID)
	if err != nil {
		page.FireErr = err.Error()
		s = nil
	} else {
		page.Upcoming = jobUpcoming(s, view, now)
	}
	page.Backfill = showBackfill(view.State.Backfill, s)
	if page.Objectives, err = c.judgeJob(ctx, view, now); err != nil {
		return err
	}
	for _, a := range view.State.Active {
		page.Active = append(page.Active, active{ID: a.ID, URL: invocationURL(view.Job.ID, a.ID), Phase: string(c.Engine.Phase(view, a)),
			Occurrence: a.At, Attempt: a.Attempt, Since: at(a.Since, now), Backfill: a.Backfill})
	}
	for _, inv := range hist {
		page.History = append(page.History, history(view.Job.ID, inv))
	}
	page.May = c.may(v, grants, name, view, s)
	c.renderTitled(w, r, v, http.StatusOK, "job", view.Job.ID,
		[]crumb{{Name: project, URL: "/projects/" + url.PathEscape(project)}, {Name: name}}, page)
	return nil
}

// may decides the buttons: each only where the viewer holds the right and
// the job's state lets it do something. A backfill needs a schedule with
// fixed occurrences (s; nil when the definition does not parse).
func (c *console) may(v viewer, grants []access.RoleGrant, job string, view engine.View, s *schedule.Schedule) mayDo {
	steer := c.Roles.May(v.ID, access.Steer, grants, job)
	trigger := c.Roles.May(v.ID, access.Trigger, grants, job)
	st := view.State.State
	return mayDo{
		Trigger:        trigger && st != statemachine.Disabled,
		Pause:          steer && st != statemachine.Paused && st != statemachine.Disabled,
		Resume:         steer && st == statemachine.Paused,
		Abort:          steer && len(view.State.Active) > 0,
		Backfill:       trigger && st != statemachine.Disabled && s != nil && s.Kind() == schedule.Cron,
		CancelBackfill: trigger && view.State.Backfill != nil,
	}
}

// history is an invocation's row: its lateness counts from its
// scheduled time to its first attempt's launch (firstLaunch), its
// duration is its last attempt's.
func history(jobID string, inv *store.InvocationRecord) historyRow {
	h := historyRow{Inv: inv, URL: invocationURL(jobID, inv.ID), Class: outcome(inv.Status), Skip: explainSkip(inv)}
	if !inv.Started.IsZero() && !inv.Ended.IsZero() {
		h.Duration = roundDuration(inv.Ended.Sub(inv.Started))
	}
	// A manual or backfilled occurrence runs when asked: it is not late.
	if first := firstLaunch(inv); !first.IsZero() && !inv.Manual && !inv.Backfill {
		h.Late = roundDuration(first.Sub(inv.Occurrence))
	}
	return h
}

// definitionFields lists a definition as its config writes it.
func definitionFields(d engine.Definition) []field {
	p := d.Policy
	out := []field{{"schedule", d.Schedule}, {"time_zone", d.TimeZone}, {"dst_gap", d.Gap}, {"dst_repeat", d.Repeat}, {"target", d.Target}}
	out = append(out,
		field{"overlap", string(p.Overlap)}, field{"max_concurrent", count(p.MaxConcurrent)},
		field{"catchup_window", dur(p.CatchupWindow)}, field{"timeout", dur(p.Timeout)},
		field{"max_attempts", count(p.MaxAttempts)}, field{"min_backoff", dur(p.MinBackoff)}, field{"max_backoff", dur(p.MaxBackoff)},
		field{"auto_disable_after", count(p.AutoDisableAfter)}, field{"jitter", dur(p.Jitter)})
	if p.Idempotent {
		out = append(out, field{"idempotent", "true"})
	}
	out = append(out, field{"slo", objectiveConfig(d.Objective)})
	kept := out[:0]
	for _, f := range out {
		if f.Value != "" {
			kept = append(kept, f)
		}
	}
	return kept
}

func count(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func dur(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}
