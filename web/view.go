package web

import (
	"encoding/json"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// The JSON shapes of the API. Times are RFC 3339 in UTC, absent when not
// set; durations are Go duration strings ("10m0s"), as in project configs.

// jobJSON is a job in a listing.
type jobJSON struct {
	ID      string `json:"id"`
	Project string `json:"project"`
	Job     string `json:"job"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`      // why PAUSED or DISABLED, in words
	Kind    string `json:"reason_kind,omitempty"` // the reason's kind: statemachine.ReasonKind
	// PausedUntil is when a PAUSED job resumes by itself, if it does.
	PausedUntil *time.Time `json:"paused_until,omitempty"`
	Schedule    string     `json:"schedule"`
	TimeZone    string     `json:"time_zone"`
	Target      string     `json:"target"`

	NextFireTime   *time.Time `json:"next_fire_time,omitempty"`
	LastInvocation *invJSON   `json:"last_invocation,omitempty"`
	// Health is absent while the job's tasks succeed.
	Health *healthJSON `json:"health,omitempty"`
}

// healthJSON is engine.Health: the deliveries of the job's tasks that
// failed in a row with a transient error, and the last one's error.
type healthJSON struct {
	TaskFailures int        `json:"task_failures"`
	LastError    string     `json:"last_error"`
	LastErrorAt  *time.Time `json:"last_error_at,omitempty"`
}

// jobDetail is one job with its definition, its unfinished invocations and
// a page of its invocation records.
type jobDetail struct {
	jobJSON
	Definition definitionJSON `json:"definition"`
	Failures   int            `json:"failures_in_a_row"`
	Active     []activeJSON   `json:"active"`
	// Backfill is the backfill under way, if any.
	Backfill *backfillJSON `json:"backfill,omitempty"`

	// Audit is the job's recent changes through the API, newest first.
	Audit []auditJSON `json:"audit"`

	// Revision is the config revision (a commit in a repo) that defined
	// the job as it is.
	Revision string `json:"revision,omitempty"`
	// NextFireTimes are the job's next scheduled occurrences, the first
	// its next_fire_time, at most maxNextFireTimes; none while it plans
	// no tick (PAUSED, DISABLED, a triggered schedule).
	NextFireTimes []time.Time `json:"next_fire_times"`

	Invocations []invJSON `json:"invocations"`
	NextCursor  string    `json:"next_cursor,omitempty"`
}

// backfillJSON is statemachine.Backfill: the range, cut at where the
// schedule took over, and where it has got to.
type backfillJSON struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Next time.Time `json:"next"`
}

// auditJSON is one change asked of a job: who, when, what, and why.
type auditJSON struct {
	At         time.Time `json:"at"`
	By         string    `json:"by"`
	Action     string    `json:"action"`
	Invocation string    `json:"invocation,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	// Until is when a pause ends by itself.
	Until *time.Time `json:"until,omitempty"`
}

func toAudit(es []engine.AuditEntry) []auditJSON {
	out := make([]auditJSON, 0, len(es))
	for _, e := range es {
		out = append(out, auditJSON{At: e.At.UTC(), By: string(e.By), Action: string(e.Action), Invocation: e.Invocation, Reason: e.Reason, Until: timePtr(e.Until)})
	}
	return out
}

type definitionJSON struct {
	Gap              string          `json:"dst_gap,omitempty"`
	Repeat           string          `json:"dst_repeat,omitempty"`
	Overlap          string          `json:"overlap,omitempty"`
	MaxConcurrent    int             `json:"max_concurrent,omitempty"`
	CatchupWindow    string          `json:"catchup_window"`
	Timeout          string          `json:"timeout"`
	MaxAttempts      int             `json:"max_attempts,omitempty"`
	MinBackoff       string          `json:"min_backoff"`
	MaxBackoff       string          `json:"max_backoff"`
	AutoDisableAfter int             `json:"auto_disable_after,omitempty"`
	Jitter           string          `json:"jitter"`
	Idempotent       bool            `json:"idempotent"`
	Spec             json.RawMessage `json:"spec,omitempty"`
	// What bounds the job's occurrences, left out when nothing does:
	// the calendars by name and days, the window as the config wrote it.
	SkipCalendars []string       `json:"skip_calendars,omitempty"`
	OnlyCalendars []string       `json:"only_calendars,omitempty"`
	Active        *engine.Window `json:"active,omitempty"`
	MaxRuns       int64          `json:"max_runs,omitempty"`
}

// activeJSON is an invocation that has not ended, as the machine sees it,
// in the phase it reads as (engine.Engine.Phase).
type activeJSON struct {
	ID         string     `json:"id"`
	Occurrence time.Time  `json:"occurrence"`
	Manual     bool       `json:"manual,omitempty"`
	Backfill   bool       `json:"backfill,omitempty"`
	Attempt    int        `json:"attempt"`
	Phase      string     `json:"phase"`
	Since      *time.Time `json:"since,omitempty"`
	RetryAt    *time.Time `json:"retry_at,omitempty"`
}

// invJSON is an invocation record.
type invJSON struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	Occurrence time.Time `json:"occurrence"`
	Manual     bool      `json:"manual,omitempty"`
	// TriggeredBy is who asked for a manual invocation.
	TriggeredBy string     `json:"triggered_by,omitempty"`
	Backfill    bool       `json:"backfill,omitempty"`
	Attempt     int        `json:"attempt,omitempty"`
	Created     *time.Time `json:"created,omitempty"`
	Started     *time.Time `json:"started,omitempty"`
	Ended       *time.Time `json:"ended,omitempty"`
	Message     string     `json:"message,omitempty"`
	Reason      string     `json:"reason,omitempty"` // SKIPPED: why
	// A SKIPPED record may stand for Count occurrences, the last at Last.
	Count int        `json:"count,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
}

// invDetail is one invocation with its log.
type invDetail struct {
	invJSON
	JobID string `json:"job_id"`
	// Revision is the config revision (a commit in a repo) the definition
	// it runs under came from; "" for a skip record, or a definition
	// stored before revisions were.
	Revision string `json:"revision,omitempty"`
	// Log is the bounded debug log: its head and tail, with a marker
	// saying how much was dropped between them.
	Log string `json:"log"`
	// LogWritten is how many bytes were ever written to the log, the
	// dropped ones too, and LogTail how many of Log's last bytes are the
	// latest written, without a gap: a follower of a running invocation
	// prints the new ones of those.
	LogWritten int `json:"log_written"`
	LogTail    int `json:"log_tail"`
}

func toJob(v engine.View, last *store.InvocationRecord) jobJSON {
	j := jobJSON{
		ID: v.Job.ID, Project: v.Job.Project, Job: jobid.Split(v.Job.ID).Job,
		State: string(v.State.State), Reason: v.State.Reason.String(), Kind: string(v.State.Reason.Kind),
		Schedule: v.Definition.Schedule, TimeZone: v.Definition.TimeZone, Target: v.Definition.Target,
	}
	if j.TimeZone == "" {
		j.TimeZone = "UTC"
	}
	j.PausedUntil = timePtr(v.State.PausedUntil)
	if at, ok := v.NextFire(); ok {
		j.NextFireTime = timePtr(at)
	}
	if last != nil {
		inv := toInv(last)
		j.LastInvocation = &inv
	}
	if h := v.Health; h != (engine.Health{}) {
		j.Health = &healthJSON{TaskFailures: h.TaskFailures, LastError: h.LastError, LastErrorAt: timePtr(h.LastErrorAt)}
	}
	return j
}

func toDefinition(d engine.Definition) definitionJSON {
	p := d.Policy
	return definitionJSON{
		Gap: d.Gap, Repeat: d.Repeat,
		Overlap: string(p.Overlap), MaxConcurrent: p.MaxConcurrent,
		CatchupWindow: p.CatchupWindow.String(), Timeout: p.Timeout.String(),
		MaxAttempts: p.MaxAttempts, MinBackoff: p.MinBackoff.String(), MaxBackoff: p.MaxBackoff.String(),
		AutoDisableAfter: p.AutoDisableAfter, Jitter: p.Jitter.String(), Idempotent: p.Idempotent,
		Spec: d.Spec, SkipCalendars: calendarWords(d.SkipCalendars), OnlyCalendars: calendarWords(d.OnlyCalendars),
		Active: windowPtr(d.Active), MaxRuns: p.MaxRuns,
	}
}

func calendarWords(cs []*schedule.Calendar) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func windowPtr(w engine.Window) *engine.Window {
	if w == (engine.Window{}) {
		return nil
	}
	return &w
}

func toBackfill(b *statemachine.Backfill) *backfillJSON {
	if b == nil {
		return nil
	}
	return &backfillJSON{From: b.From.UTC(), To: b.To.UTC(), Next: b.Next.UTC()}
}

func toActive(eng *engine.Engine, v engine.View) []activeJSON {
	out := make([]activeJSON, 0, len(v.State.Active))
	for _, a := range v.State.Active {
		out = append(out, activeJSON{
			ID: a.ID, Occurrence: a.At.UTC(), Manual: a.Manual, Backfill: a.Backfill, Attempt: a.Attempt, Phase: string(eng.Phase(v, a)),
			Since: timePtr(a.Since), RetryAt: timePtr(a.RetryAt),
		})
	}
	return out
}

func toInv(inv *store.InvocationRecord) invJSON {
	j := invJSON{
		ID: inv.ID, Status: inv.Status, Occurrence: inv.Occurrence.UTC(), Manual: inv.Manual, TriggeredBy: inv.TriggeredBy, Backfill: inv.Backfill, Attempt: inv.Attempt,
		Created: timePtr(inv.Created), Started: timePtr(inv.Started), Ended: timePtr(inv.Ended),
		Message: inv.Message, Reason: inv.Reason,
	}
	if inv.Count > 1 {
		j.Count, j.Last = inv.Count, timePtr(inv.Last)
	}
	return j
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// maxNextFireTimes is how many of a job's next occurrences its detail
// lists, as Temporal's schedule page does.
const maxNextFireTimes = 5

// nextFireTimes are the job's next scheduled occurrences: the one its
// planned tick is for, then the schedule's next ones after it. A
// schedule that no longer parses leaves the planned one alone.
func nextFireTimes(v engine.View) []time.Time {
	out := []time.Time{}
	at, ok := v.NextFire()
	if !ok {
		return out
	}
	out = append(out, at.UTC())
	sched, err := v.Definition.Parse(v.Job.ID)
	if err != nil {
		return out
	}
	for len(out) < maxNextFireTimes {
		if at, ok = sched.Next(at); !ok {
			break
		}
		out = append(out, at.UTC())
	}
	return out
}
