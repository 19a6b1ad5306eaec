package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
)

// The definition's stored form, in every job and in every invocation record
// (the definition it ran under). Its JSON names are a format: never rename
// or reuse one. A field added with its zero value left out keeps every
// stored definition's bytes as they are; a change that an older release
// could not read correctly gets a new version, and decodeDefinition keeps
// reading every older one; testdata/definition pins each version.
const definitionVersion = 1

// storedDefinition is version 1 of a stored definition. Durations are Go
// duration strings ("1m30s"): exact, and readable in the database.
type storedDefinition struct {
	Version  int             `json:"v"`
	Schedule string          `json:"schedule"`
	TimeZone string          `json:"time_zone,omitempty"`
	Gap      string          `json:"gap,omitempty"`
	Repeat   string          `json:"repeat,omitempty"`
	Policy   *storedPolicy   `json:"policy,omitempty"`
	Target   string          `json:"target"`
	Spec     json.RawMessage `json:"spec,omitempty"`
	// Notify was added within version 1: left out when nil, so every
	// definition without it keeps its bytes, and its hash.
	Notify *storedNotify `json:"notify,omitempty"`
	// Retention was added within version 1: left out when it is all
	// defaults, so the jobs that existed before keep their bytes (and
	// their hashes), and a release before it ignores it.
	Retention *storedRetention `json:"retention,omitempty"`
	// Revision was added within version 1, left out while empty: an older
	// release reads the definition and drops it.
	Revision string `json:"revision,omitempty"`
	// Active and the calendars were added within version 1, as the cap on
	// runs (storedPolicy.MaxRuns) was: left out when the job has none, so
	// every definition without them keeps its bytes and its hash. A
	// release before them drops them and runs the job unbounded; its
	// config parser refuses a revision that sets them.
	Active        *storedWindow    `json:"active,omitempty"`
	SkipCalendars []storedCalendar `json:"skip_calendars,omitempty"`
	OnlyCalendars []storedCalendar `json:"only_calendars,omitempty"`
	// SLO was added within version 1, left out when the job's config
	// says nothing of objectives, so every definition before it keeps its
	// bytes and its hash; a release before it drops it.
	SLO *storedSLO `json:"slo,omitempty"`
}

// storedSLO is a job's objectives; targets are fractions (0.99).
type storedSLO struct {
	Lateness string  `json:"lateness,omitempty"`
	OnTime   float64 `json:"on_time,omitempty"`
	Success  float64 `json:"success,omitempty"`
	Window   string  `json:"window,omitempty"`
	None     bool    `json:"none,omitempty"`
}

type storedWindow struct {
	From  string `json:"from,omitempty"`
	Until string `json:"until,omitempty"`
}

// storedCalendar is a calendar with its days: weekdays as "mon,tue" and
// dates as "2026-12-25", ranges as "2026-12-24/2026-12-26".
type storedCalendar struct {
	Name     string   `json:"name"`
	TimeZone string   `json:"time_zone,omitempty"`
	Weekdays string   `json:"weekdays,omitempty"`
	Dates    []string `json:"dates,omitempty"`
}

type storedNotify struct {
	URL     string   `json:"url"`
	Format  string   `json:"format,omitempty"`
	On      []string `json:"on,omitempty"`
	LongRun string   `json:"long_run,omitempty"`
}

type storedRetention struct {
	Age          string `json:"age,omitempty"`
	Count        int    `json:"count,omitempty"`
	FailureAge   string `json:"failure_age,omitempty"`
	FailureCount int    `json:"failure_count,omitempty"`
}

type storedPolicy struct {
	Overlap          string `json:"overlap,omitempty"`
	MaxConcurrent    int    `json:"max_concurrent,omitempty"`
	CatchupWindow    string `json:"catchup_window,omitempty"`
	Timeout          string `json:"timeout,omitempty"`
	MaxAttempts      int    `json:"max_attempts,omitempty"`
	MinBackoff       string `json:"min_backoff,omitempty"`
	MaxBackoff       string `json:"max_backoff,omitempty"`
	AutoDisableAfter int    `json:"auto_disable_after,omitempty"`
	Jitter           string `json:"jitter,omitempty"`
	Idempotent       bool   `json:"idempotent,omitempty"`
	MaxRuns          int64  `json:"max_runs,omitempty"`
}

// definitionV0 is what releases up to 313afd2 stored: json.Marshal of
// Definition, whose Policy had no JSON names (Go's field names, durations
// in nanoseconds). Frozen: statemachine.Policy may change, this may not.
type definitionV0 struct {
	Schedule string `json:"schedule"`
	TimeZone string `json:"time_zone"`
	Gap      string `json:"gap"`
	Repeat   string `json:"repeat"`
	Policy   struct {
		Overlap          string
		MaxConcurrent    int
		CatchupWindow    time.Duration
		Timeout          time.Duration
		MaxAttempts      int
		MinBackoff       time.Duration
		MaxBackoff       time.Duration
		AutoDisableAfter int
		Jitter           time.Duration
		Idempotent       bool
	} `json:"policy"`
	Target string          `json:"target"`
	Spec   json.RawMessage `json:"spec"`
}

func encodeDefinition(def Definition) ([]byte, error) {
	p := def.Policy
	sp := storedPolicy{
		Overlap: string(p.Overlap), MaxConcurrent: p.MaxConcurrent,
		CatchupWindow: durationString(p.CatchupWindow), Timeout: durationString(p.Timeout),
		MaxAttempts: p.MaxAttempts, MinBackoff: durationString(p.MinBackoff), MaxBackoff: durationString(p.MaxBackoff),
		AutoDisableAfter: p.AutoDisableAfter, Jitter: durationString(p.Jitter), Idempotent: p.Idempotent, MaxRuns: p.MaxRuns,
	}
	out := storedDefinition{
		Version: definitionVersion, Schedule: def.Schedule, TimeZone: def.TimeZone, Gap: def.Gap, Repeat: def.Repeat,
		Target: def.Target, Spec: def.Spec, Revision: def.Revision,
	}
	if n := def.Notify; n != nil {
		out.Notify = &storedNotify{URL: n.URL, Format: n.Format, On: n.On, LongRun: durationString(n.LongRun)}
	}
	if sp != (storedPolicy{}) {
		out.Policy = &sp
	}
	if w := def.Active; w != (Window{}) {
		out.Active = &storedWindow{From: w.From, Until: w.Until}
	}
	out.SkipCalendars = storeCalendars(def.SkipCalendars)
	out.OnlyCalendars = storeCalendars(def.OnlyCalendars)
	if r := def.Retention; r != (Retention{}) {
		out.Retention = &storedRetention{Age: durationString(r.Age), Count: r.Count,
			FailureAge: durationString(r.FailureAge), FailureCount: r.FailureCount}
	}
	if o := def.Objective; o != (slo.Objective{}) {
		out.SLO = &storedSLO{Lateness: durationString(o.Lateness), OnTime: o.OnTime, Success: o.Success,
			Window: durationString(o.Window), None: o.None}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the definition: %w", err)
	}
	return b, nil
}

func storeCalendars(cs []*schedule.Calendar) []storedCalendar {
	var out []storedCalendar
	for _, c := range cs {
		sc := storedCalendar{Name: c.Name()}
		if loc := c.Location(); loc != nil {
			sc.TimeZone = loc.String()
		}
		var ws []string
		for _, w := range c.Weekdays() {
			ws = append(ws, weekdayWords[w])
		}
		sc.Weekdays = strings.Join(ws, ",")
		for _, r := range c.Ranges() {
			d := r.First.String()
			if r.Last != r.First {
				d += "/" + r.Last.String()
			}
			sc.Dates = append(sc.Dates, d)
		}
		out = append(out, sc)
	}
	return out
}

var weekdayWords = [...]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func (sc storedCalendar) calendar() (*schedule.Calendar, error) {
	var loc *time.Location
	if sc.TimeZone != "" {
		var err error
		if loc, err = schedule.LoadZone(sc.TimeZone); err != nil {
			return nil, err
		}
	}
	var ws []time.Weekday
	for w := range strings.SplitSeq(sc.Weekdays, ",") {
		if w == "" {
			continue
		}
		i := slices.Index(weekdayWords[:], w)
		if i < 0 {
			return nil, fmt.Errorf("weekday %q", w)
		}
		ws = append(ws, time.Weekday(i))
	}
	var rs []schedule.DateRange
	for _, d := range sc.Dates {
		first, last, _ := strings.Cut(d, "/")
		if last == "" {
			last = first
		}
		f, err := schedule.ParseDate(first)
		if err != nil {
			return nil, err
		}
		l, err := schedule.ParseDate(last)
		if err != nil {
			return nil, err
		}
		rs = append(rs, schedule.DateRange{First: f, Last: l})
	}
	return schedule.NewCalendar(sc.Name, loc, ws, rs)
}

func decodeCalendars(field string, in []storedCalendar) ([]*schedule.Calendar, error) {
	var out []*schedule.Calendar
	for _, sc := range in {
		c, err := sc.calendar()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", field, sc.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// decodeDefinition reads any version of a stored definition.
func decodeDefinition(b []byte) (Definition, error) {
	// Nearly every definition read is of the version this release writes:
	// it is decoded as that at once, without a first pass over the bytes
	// for the version alone, which was half of each decode. A record of
	// this version that fails it fails with that decode's error.
	var in storedDefinition
	whole := json.Unmarshal(b, &in)
	if whole == nil && in.Version == definitionVersion {
		return in.definition()
	}
	var v struct {
		Version *int `json:"v"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Definition{}, err
	}
	switch {
	case v.Version == nil:
		return decodeDefinitionV0(b)
	case *v.Version == definitionVersion:
		return Definition{}, whole
	}
	return Definition{}, fmt.Errorf("version %d: this release reads versions 0 to %d", *v.Version, definitionVersion)
}

// definition is what a version 1 definition says, in the engine's terms.
func (in storedDefinition) definition() (Definition, error) {
	def := Definition{Schedule: in.Schedule, TimeZone: in.TimeZone, Gap: in.Gap, Repeat: in.Repeat, Target: in.Target, Spec: in.Spec, Revision: in.Revision}
	if n := in.Notify; n != nil {
		def.Notify = &Notify{URL: n.URL, Format: n.Format, On: n.On}
		if n.LongRun != "" {
			var err error
			if def.Notify.LongRun, err = time.ParseDuration(n.LongRun); err != nil {
				return Definition{}, fmt.Errorf("notify.long_run: %w", err)
			}
		}
	}
	if p := in.Policy; p != nil {
		def.Policy = statemachine.Policy{
			Overlap: statemachine.Overlap(p.Overlap), MaxConcurrent: p.MaxConcurrent,
			MaxAttempts: p.MaxAttempts, AutoDisableAfter: p.AutoDisableAfter, Idempotent: p.Idempotent, MaxRuns: p.MaxRuns,
		}
		for _, d := range []struct {
			name string
			in   string
			out  *time.Duration
		}{
			{"catchup_window", p.CatchupWindow, &def.Policy.CatchupWindow},
			{"timeout", p.Timeout, &def.Policy.Timeout},
			{"min_backoff", p.MinBackoff, &def.Policy.MinBackoff},
			{"max_backoff", p.MaxBackoff, &def.Policy.MaxBackoff},
			{"jitter", p.Jitter, &def.Policy.Jitter},
		} {
			if d.in == "" {
				continue
			}
			var err error
			if *d.out, err = time.ParseDuration(d.in); err != nil {
				return Definition{}, fmt.Errorf("policy.%s: %w", d.name, err)
			}
		}
	}
	if w := in.Active; w != nil {
		def.Active = Window{From: w.From, Until: w.Until}
	}
	var err error
	if def.SkipCalendars, err = decodeCalendars("skip_calendars", in.SkipCalendars); err != nil {
		return Definition{}, err
	}
	if def.OnlyCalendars, err = decodeCalendars("only_calendars", in.OnlyCalendars); err != nil {
		return Definition{}, err
	}
	if o := in.SLO; o != nil {
		def.Objective = slo.Objective{OnTime: o.OnTime, Success: o.Success, None: o.None}
		for _, d := range []struct {
			name string
			in   string
			out  *time.Duration
		}{
			{"lateness", o.Lateness, &def.Objective.Lateness},
			{"window", o.Window, &def.Objective.Window},
		} {
			if d.in == "" {
				continue
			}
			var err error
			if *d.out, err = time.ParseDuration(d.in); err != nil {
				return Definition{}, fmt.Errorf("slo.%s: %w", d.name, err)
			}
		}
	}
	if r := in.Retention; r != nil {
		def.Retention = Retention{Count: r.Count, FailureCount: r.FailureCount}
		for _, d := range []struct {
			name string
			in   string
			out  *time.Duration
		}{
			{"age", r.Age, &def.Retention.Age},
			{"failure_age", r.FailureAge, &def.Retention.FailureAge},
		} {
			if d.in == "" {
				continue
			}
			var err error
			if *d.out, err = time.ParseDuration(d.in); err != nil {
				return Definition{}, fmt.Errorf("retention.%s: %w", d.name, err)
			}
		}
	}
	return def, nil
}

func decodeDefinitionV0(b []byte) (Definition, error) {
	var in definitionV0
	if err := json.Unmarshal(b, &in); err != nil {
		return Definition{}, err
	}
	p := in.Policy
	return Definition{
		Schedule: in.Schedule, TimeZone: in.TimeZone, Gap: in.Gap, Repeat: in.Repeat,
		Policy: statemachine.Policy{
			Overlap: statemachine.Overlap(p.Overlap), MaxConcurrent: p.MaxConcurrent, CatchupWindow: p.CatchupWindow,
			Timeout: p.Timeout, MaxAttempts: p.MaxAttempts, MinBackoff: p.MinBackoff, MaxBackoff: p.MaxBackoff,
			AutoDisableAfter: p.AutoDisableAfter, Jitter: p.Jitter, Idempotent: p.Idempotent,
		},
		Target: in.Target, Spec: in.Spec,
	}, nil
}

// DecodeDefinition reads a definition as the store keeps it apart
// (store.Store.Definition), of any version: the definition a job had
// before a revision changed it (Changes.Before), for one.
func DecodeDefinition(b []byte) (Definition, error) { return decodeDefinition(b) }
