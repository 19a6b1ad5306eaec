package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Definition is a job as its project's config defines it.
type Definition struct {
	Schedule string `json:"schedule"`
	TimeZone string `json:"time_zone,omitempty"` // IANA zone; "" is UTC
	Gap      string `json:"gap,omitempty"`       // DST gap policy: "skip", "shift", "" for the default
	Repeat   string `json:"repeat,omitempty"`    // DST repeat policy: "first", "last", "both", ""

	Policy statemachine.Policy `json:"policy"`

	// Active is the job's active window, each bound as its config wrote
	// it: a date (the whole day, on the job's clock) or an RFC 3339 time;
	// "" leaves that side open.
	Active Window `json:"active,omitzero"`
	// SkipCalendars are the calendars on whose days the job has no
	// occurrences, and OnlyCalendars, if any, those on whose days alone it
	// has them; each holds its days, as the config's revision read them.
	SkipCalendars []*schedule.Calendar `json:"-"`
	OnlyCalendars []*schedule.Calendar `json:"-"`

	// Target is the target kind ("noop", "url_fetch", "command", ...) and
	// Spec its settings, handed to it as they are.
	Target string          `json:"target"`
	Spec   json.RawMessage `json:"spec,omitempty"`

	// Notify is where to tell people of the job's transitions; nil for
	// nowhere.
	Notify *Notify `json:"notify,omitempty"`
	// Retention is how long the job's invocation records are kept; its
	// zero fields take the server's defaults.
	Retention Retention `json:"retention,omitzero"`
	// Objective is the job's lateness and success objectives as its
	// config wrote them: zero takes the server's defaults (slo.Fill).
	Objective slo.Objective `json:"-"`
	// Revision is the config revision (a commit, or a file's hash) that
	// brought this definition; the invocations that run under it name it.
	// It is not part of what the job is: a revision that leaves the job
	// as it was keeps the revision that defined it.
	Revision string `json:"revision,omitempty"`
}

// Equal reports whether d and o define the same job: equal fields but
// Revision, and specs that are the same JSON value however they are
// spelled.
func (d *Definition) Equal(o *Definition) bool {
	return d.Schedule == o.Schedule && d.TimeZone == o.TimeZone && d.Gap == o.Gap && d.Repeat == o.Repeat &&
		d.Policy == o.Policy && d.Target == o.Target && sameJSON(d.Spec, o.Spec) && d.Notify.equal(o.Notify) &&
		d.Retention == o.Retention && d.Active == o.Active && d.Objective == o.Objective &&
		slices.EqualFunc(d.SkipCalendars, o.SkipCalendars, (*schedule.Calendar).Equal) &&
		slices.EqualFunc(d.OnlyCalendars, o.OnlyCalendars, (*schedule.Calendar).Equal)
}

// Window is a job's active window as its config writes it (see
// Definition.Active).
type Window struct {
	From  string `json:"from,omitempty"`
	Until string `json:"until,omitempty"`
}

// Bounds resolves the window on the wall clock of loc: a date From is the
// start of that day, a date Until its end.
func (w Window) Bounds(loc *time.Location) (schedule.Window, error) {
	var out schedule.Window
	var err error
	if w.From != "" {
		if out.From, err = schedule.ParseBound(w.From, loc, false); err != nil {
			return out, fmt.Errorf("active.from: %w", err)
		}
	}
	if w.Until != "" {
		if out.Until, err = schedule.ParseBound(w.Until, loc, true); err != nil {
			return out, fmt.Errorf("active.until: %w", err)
		}
	}
	return out, nil
}

// sameJSON reports whether a and b encode the same JSON value; an empty
// spec and null are the same.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if len(a) > 0 && json.Unmarshal(a, &va) != nil {
		return false
	}
	if len(b) > 0 && json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// Parse parses the definition's schedule for the job.
func (d *Definition) Parse(jobID string) (*schedule.Schedule, error) {
	loc, err := schedule.LoadZone(d.TimeZone)
	if err != nil {
		return nil, err
	}
	gap, err := schedule.ParseGap(d.Gap)
	if err != nil {
		return nil, err
	}
	repeat, err := schedule.ParseRepeat(d.Repeat)
	if err != nil {
		return nil, err
	}
	w, err := d.Active.Bounds(loc)
	if err != nil {
		return nil, err
	}
	return schedule.Parse(d.Schedule, schedule.Options{JobID: jobID, Location: loc, Gap: gap, Repeat: repeat,
		Active: w, Skip: d.SkipCalendars, Only: d.OnlyCalendars})
}

// definitionOf returns the definition an invocation runs under: the one
// its hash names, usually the job's current one and cached already, or
// the one a record of an older release holds.
func (e *Engine) definitionOf(ctx context.Context, inv *store.InvocationRecord) (*Definition, error) {
	encoded := inv.Definition
	switch {
	case inv.DefinitionHash == "" && len(encoded) == 0:
		return nil, fmt.Errorf("invocation %s/%s (%s) records no definition", inv.JobID, inv.ID, inv.Status)
	case inv.DefinitionHash != "":
		if def, ok := e.cache.named(inv.JobID, inv.DefinitionHash); ok {
			return def, nil
		}
		var err error
		if encoded, err = e.store.Definition(ctx, inv.JobID, inv.DefinitionHash); err != nil {
			return nil, fmt.Errorf("job %s: reading definition %s: %w", inv.JobID, inv.DefinitionHash, err)
		}
	}
	def, _, err := e.cache.definition(inv.JobID, encoded)
	return def, err
}
