package config

import (
	"regexp"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/targets"
)

// TargetKinds are the target fields a job may have, exactly one of them.
var TargetKinds = []string{"url_fetch", "command", "noop", "swarming", "pubsub"}

// jobFields are the fields of a job, its target included.
var jobFields = append([]string{
	"id", "schedule", "time_zone", "dst", "overlap", "max_concurrent",
	"catchup_window", "timeout", "retries", "auto_disable_after", "jitter",
	"idempotent", "disabled", "notify", "retention",
	"skip_calendars", "only_calendars", "active", "max_runs", "slo",
}, TargetKinds...)

// The defaults of a job's policy; docs/config.md lists them. They are
// written into the definition, so that a job that spells a default out and
// one that leaves it out have equal definitions.
const (
	defaultOverlap     = statemachine.OverlapSkip
	defaultMaxAttempts = 1
	defaultMinBackoff  = 10 * time.Second
	defaultMaxBackoff  = 10 * time.Minute
)

// job reads one job. The job's ID is set whenever the id could be read, so
// that duplicates are found even among invalid jobs; ok is false when
// anything about the job was wrong.
func (d *decoder) job(project string, n *yaml.Node, path string, known map[string]targets.Target) (engine.Job, bool) {
	before := d.failures()
	n = resolve(n)
	var j engine.Job
	fs, ok := d.mapping(n, path, jobFields...)
	if !ok {
		return j, false
	}
	if f, ok := fs["id"]; !ok {
		d.errorf(n, path+".id", "missing")
	} else if id, ok := d.str(f.value, path+".id"); ok {
		if !jobID.MatchString(id) || id == "." || id == ".." {
			d.errorf(f.value, path+".id", "%q: want 1 to 100 of A-Z a-z 0-9 _ . -", id)
		} else {
			j.ID = jobid.Join(project, id)
		}
	}
	def := &j.Definition
	d.policy(fs, path, &def.Policy)
	if f, ok := fs["disabled"]; ok {
		j.Disabled, _ = d.boolean(f.value, path+".disabled")
	}
	if f, ok := fs["retention"]; ok {
		d.retention(f.value, path+".retention", &def.Retention)
	}
	if f, ok := fs["slo"]; ok {
		d.objective(f.value, path+".slo", &def.Objective)
	}
	d.when(fs, n, path, j.ID, def)
	d.target(fs, n, path, project, j.ID, def, known)
	d.notify(fs, path, def)
	return j, d.failures() == before
}

// when reads the schedule, its zone and its DST policy, and checks the
// jitter against the schedule.
func (d *decoder) when(fs map[string]field, n *yaml.Node, path, id string, def *engine.Definition) {
	opts := schedule.Options{JobID: id, Location: time.UTC}
	if f, ok := fs["time_zone"]; ok {
		if tz, ok := d.str(f.value, path+".time_zone"); ok {
			if loc, err := schedule.LoadZone(tz); err != nil {
				d.errorf(f.value, path+".time_zone", "%v", err)
			} else {
				def.TimeZone, opts.Location = tz, loc
			}
		}
	}
	if f, ok := fs["dst"]; ok {
		if dst, ok := d.mapping(f.value, path+".dst", "gap", "repeat"); ok {
			if g, ok := dst["gap"]; ok {
				if s, ok := d.str(g.value, path+".dst.gap"); ok {
					if v, err := schedule.ParseGap(s); err != nil {
						d.errorf(g.value, path+".dst.gap", "%v", err)
					} else {
						def.Gap, opts.Gap = s, v
					}
				}
			}
			if r, ok := dst["repeat"]; ok {
				if s, ok := d.str(r.value, path+".dst.repeat"); ok {
					if v, err := schedule.ParseRepeat(s); err != nil {
						d.errorf(r.value, path+".dst.repeat", "%v", err)
					} else {
						def.Repeat, opts.Repeat = s, v
					}
				}
			}
		}
	}
	f, ok := fs["schedule"]
	if !ok {
		d.errorf(n, path+".schedule", "missing: want a schedule such as \"30 2 * * *\" or \"@every 10m\"")
		return
	}
	expr, ok := d.str(f.value, path+".schedule")
	if !ok {
		return
	}
	if opts.JobID == "" {
		// The id is bad or missing (already reported); hashed fields still
		// need a seed to be checked.
		opts.JobID = "job"
	}
	s, err := schedule.Parse(expr, opts)
	if err != nil {
		d.errorf(f.value, path+".schedule", "%v", err)
		d.bounds(fs, path, nil, opts.Location, def)
		return
	}
	def.Schedule = expr
	d.bounds(fs, path, s, opts.Location, def)
	if jf, ok := fs["jitter"]; ok && def.Policy.Jitter > 0 {
		if gap, short := gapWithin(s, def.Policy.Jitter); short {
			d.errorf(jf.value, path+".jitter", "%s is not smaller than %s, the shortest gap between two fire times of the schedule: occurrences could swap places", def.Policy.Jitter, gap)
		}
	}
}

// bounds reads what bounds the job's occurrences: its calendars, its
// active window and its cap on runs. s is its schedule, nil if it did not
// parse; loc is its zone, which a date in the window is read in.
func (d *decoder) bounds(fs map[string]field, path string, s *schedule.Schedule, loc *time.Location, def *engine.Definition) {
	fixed := s == nil || s.Kind() == schedule.Cron
	for _, c := range []struct {
		name string
		out  *[]*schedule.Calendar
	}{{"skip_calendars", &def.SkipCalendars}, {"only_calendars", &def.OnlyCalendars}} {
		f, ok := fs[c.name]
		if !ok {
			continue
		}
		*c.out = d.jobCalendars(f.value, path+"."+c.name, d.projectCals)
		if !fixed {
			d.errorf(f.key, path+"."+c.name, "calendars remove fire times of a cron schedule; %s schedule %q has none (an interval counts from the end of the previous run): write it as cron, e.g. \"*/10 * * * *\"", s.Kind(), s.String())
		}
	}
	if f, ok := fs["active"]; ok {
		w, fromNode, untilNode := d.active(f.value, path+".active")
		def.Active = engine.Window{From: w.From, Until: w.Until}
		switch b, err := def.Active.Bounds(loc); {
		case s != nil && s.Kind() == schedule.Triggered:
			d.errorf(f.key, path+".active", "a triggered schedule has no fire times for an active window to bound; triggers are never bounded")
		case err == nil && fromNode != nil && untilNode != nil && b.Until.Before(b.From):
			d.errorf(untilNode, path+".active.until", "%s is before from %s", w.Until, w.From)
		}
	}
	if f, ok := fs["max_runs"]; ok {
		if v, ok := d.integer(f.value, path+".max_runs"); ok {
			switch {
			case v < 1:
				d.errorf(f.value, path+".max_runs", "want at least 1; leave it out for no cap")
			case s != nil && s.Kind() == schedule.Triggered:
				d.errorf(f.value, path+".max_runs", "a triggered schedule has no scheduled runs to cap; triggers are never counted")
			default:
				def.Policy.MaxRuns = int64(v)
			}
		}
	}
}

// policy reads the fields of statemachine.Policy, with their defaults.
func (d *decoder) policy(fs map[string]field, path string, p *statemachine.Policy) {
	p.Overlap = defaultOverlap
	p.MaxConcurrent = 1
	p.MaxAttempts, p.MinBackoff, p.MaxBackoff = defaultMaxAttempts, defaultMinBackoff, defaultMaxBackoff
	if f, ok := fs["overlap"]; ok {
		if s, ok := d.str(f.value, path+".overlap"); ok {
			switch o := statemachine.Overlap(s); o {
			case statemachine.OverlapSkip, statemachine.OverlapQueueOne, statemachine.OverlapAllow, statemachine.OverlapReplace:
				p.Overlap = o
			default:
				d.errorf(f.value, path+".overlap", "%q: want skip, queue_one, allow or replace", s)
			}
		}
	}
	if f, ok := fs["max_concurrent"]; ok {
		if v, ok := d.integer(f.value, path+".max_concurrent"); ok {
			switch {
			case v < 1:
				d.errorf(f.value, path+".max_concurrent", "want at least 1, got %d", v)
			case p.Overlap != statemachine.OverlapAllow:
				d.errorf(f.value, path+".max_concurrent", "applies only with overlap: allow (overlap is %s)", p.Overlap)
			default:
				p.MaxConcurrent = v
			}
		}
	}
	if f, ok := fs["catchup_window"]; ok {
		p.CatchupWindow, _ = d.duration(f.value, path+".catchup_window")
	}
	if f, ok := fs["timeout"]; ok {
		if v, ok := d.duration(f.value, path+".timeout"); ok && v == 0 {
			d.errorf(f.value, path+".timeout", "want a positive duration; leave it out for the server's default")
		} else {
			p.Timeout = v
		}
	}
	if f, ok := fs["retries"]; ok {
		d.retries(f.value, path+".retries", p)
	}
	if f, ok := fs["auto_disable_after"]; ok {
		p.AutoDisableAfter, _ = d.integer(f.value, path+".auto_disable_after")
	}
	if f, ok := fs["jitter"]; ok {
		p.Jitter, _ = d.duration(f.value, path+".jitter")
	}
	if f, ok := fs["idempotent"]; ok {
		p.Idempotent, _ = d.boolean(f.value, path+".idempotent")
	}
}

func (d *decoder) retries(n *yaml.Node, path string, p *statemachine.Policy) {
	fs, ok := d.mapping(n, path, "max_attempts", "min_backoff", "max_backoff")
	if !ok {
		return
	}
	if f, ok := fs["max_attempts"]; ok {
		if v, ok := d.integer(f.value, path+".max_attempts"); ok && v < 1 {
			d.errorf(f.value, path+".max_attempts", "want at least 1, got %d", v)
		} else if ok {
			p.MaxAttempts = v
		}
	}
	minOK, maxOK := true, true
	if f, ok := fs["min_backoff"]; ok {
		p.MinBackoff, minOK = d.duration(f.value, path+".min_backoff")
	}
	if f, ok := fs["max_backoff"]; ok {
		p.MaxBackoff, maxOK = d.duration(f.value, path+".max_backoff")
	}
	if minOK && maxOK && p.MinBackoff > p.MaxBackoff {
		at := n
		if f, ok := fs["min_backoff"]; ok {
			at = f.value
		}
		d.errorf(at, path+".min_backoff", "%s is more than max_backoff %s", p.MinBackoff, p.MaxBackoff)
	}
}

// target reads the job's one target: its kind must be one the server runs,
// and its settings are handed on as JSON for the target to check.
func (d *decoder) target(fs map[string]field, n *yaml.Node, path, project, id string, def *engine.Definition, known map[string]targets.Target) {
	var kinds []string
	for _, k := range TargetKinds {
		if _, ok := fs[k]; ok {
			kinds = append(kinds, k)
		}
	}
	// The second in the file is the one to point at.
	slices.SortFunc(kinds, func(a, b string) int { return fs[a].key.Line - fs[b].key.Line })
	switch len(kinds) {
	case 0:
		d.errorf(n, path, "no target: want exactly one of url_fetch, command, noop, swarming, pubsub")
		return
	case 1:
	default:
		d.errorf(fs[kinds[1]].key, path+"."+kinds[1], "a second target (the job has %s too): want exactly one", kinds[0])
		return
	}
	kind := kinds[0]
	f, fpath := fs[kind], path+"."+kind
	t, ok := known[kind]
	if !ok {
		d.errorf(f.key, fpath, "job %s: target %s is not enabled on this server", nameOr(id, path), kind)
		return
	}
	if g, ok := t.(targets.ProjectGate); ok {
		if err := g.Allows(project); err != nil {
			d.errorf(f.key, fpath, "job %s: %v", nameOr(id, path), err)
			return
		}
	}
	spec, ok := d.specJSON(f.value, fpath)
	if !ok {
		return
	}
	if c, ok := t.(targets.Checker); ok {
		if err := c.Check(spec); err != nil {
			// An unknown field of the spec is reported at its own key.
			if m := unknownJSONField.FindStringSubmatch(err.Error()); m != nil {
				if k := specKey(resolve(f.value), m[1]); k != nil {
					d.errorf(k, fpath+"."+m[1], "unknown field (%v)", err)
					return
				}
			}
			d.errorf(resolve(f.value), fpath, "%v", err)
			return
		}
	}
	if c, ok := t.(targets.ProjectChecker); ok {
		if field, err := c.CheckFor(project, spec); err != nil {
			at, atPath := resolve(f.value), fpath
			if field != "" {
				at, atPath = specField(at, field), fpath+"."+field
			}
			d.errorf(at, atPath, "%v", err)
			return
		}
	}
	def.Target, def.Spec = kind, spec
}

func nameOr(id, path string) string {
	if id == "" {
		return path
	}
	return id
}

// unknownJSONField finds the field in encoding/json's refusal of one.
var unknownJSONField = regexp.MustCompile(`unknown field "([^"]+)"`)

// specKey is the key node of a target's field name; nil if it has none.
func specKey(n *yaml.Node, name string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i]
		}
	}
	return nil
}

// specField returns the value of a target's field name, to point an error
// at; the target's own node if it has no such field.
func specField(n *yaml.Node, name string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return resolve(n.Content[i+1])
		}
	}
	return n
}
