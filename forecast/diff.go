package forecast

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/engine"
)

// Change says what a config change does to one job.
type Change string

// What a config change does to a job.
const (
	Added   Change = "added"
	Removed Change = "removed"
	Changed Change = "changed"
)

// Options say over which horizons a Diff looks, from when, and what it
// calls a herd.
type Options struct {
	Start time.Time `json:"start"`
	// Week is the horizon whose fire times are compared (DefaultWeek if
	// 0); Day the one whose launches per second are (DefaultDay if 0).
	Week, Day time.Duration `json:"-"`
	// Herd is the most launches one second may get from a change without
	// a warning (DefaultHerd if 0).
	Herd int `json:"herd"`
}

// Defaults of Options.
const (
	DefaultWeek = 7 * 24 * time.Hour
	DefaultDay  = 24 * time.Hour
	DefaultHerd = 100
)

// MaxListed bounds each list a Diff keeps (fire times of a job, herd
// seconds, jobs of a herd), beside its full count.
const MaxListed = 5

// Diff is what a config change does: to each job it adds, removes or
// changes, and to the launches per second.
type Diff struct {
	Options
	Jobs []JobDiff `json:"jobs"` // by id
	// BeforePeak and AfterPeak are the launches of the whole configs in
	// the busiest second of the day, and BeforePeakAt and AfterPeakAt
	// when it starts.
	BeforePeak     int       `json:"before_peak"`
	BeforePeakAt   time.Time `json:"before_peak_at"`
	AfterPeak      int       `json:"after_peak"`
	AfterPeakAt    time.Time `json:"after_peak_at"`
	BeforeLaunches int       `json:"before_launches"` // over the day
	AfterLaunches  int       `json:"after_launches"`
	// Herds are the busiest of the seconds of the day that the change
	// takes past Options.Herd launches, busiest first (the first
	// MaxListed of HerdSeconds).
	Herds       []Herd `json:"herds"`
	HerdSeconds int    `json:"herd_seconds"`
	// Invalid are the jobs of either config whose schedule does not
	// parse, with why; they are left out of the forecasts.
	Invalid []string `json:"invalid,omitempty"`
}

// JobDiff is what a change does to one job.
type JobDiff struct {
	ID     string  `json:"id"`
	Change Change  `json:"change"`
	Fields []Field `json:"fields,omitempty"` // for Changed
	// Gone are the first of the fire times in the week that the change
	// removes, Come of those it adds (with their counts): all of them
	// for a job added or removed, those that move for a changed one.
	Gone      []time.Time `json:"gone"`
	GoneCount int         `json:"gone_count"`
	Come      []time.Time `json:"come"`
	ComeCount int         `json:"come_count"`
}

// Herd is a second that a change takes past the herd threshold.
type Herd struct {
	At     time.Time `json:"at"`
	Before int       `json:"before"`
	After  int       `json:"after"`
	// Jobs are the first jobs the change brings to this second (of
	// JobCount), each with the schedule that would spread it.
	Jobs     []Spread `json:"jobs"`
	JobCount int      `json:"job_count"`
}

// Spread is a job in a herd, with an expression that hashes (H) what it
// fixes, and "" when there is none to suggest.
type Spread struct {
	ID       string `json:"id"`
	Schedule string `json:"schedule"`
	Suggest  string `json:"suggest,omitempty"`
}

// Warnings is how many warnings the diff carries: its herd seconds.
func (d *Diff) Warnings() int { return d.HerdSeconds }

// Changes is how many jobs the diff adds, removes or changes.
func (d *Diff) Changes() int { return len(d.Jobs) }

// Compare computes what changing the jobs old into the jobs new does.
// Disabled jobs count as absent.
func Compare(old, new []engine.Job, opts Options) *Diff {
	if opts.Week == 0 {
		opts.Week = DefaultWeek
	}
	if opts.Day == 0 {
		opts.Day = DefaultDay
	}
	if opts.Herd == 0 {
		opts.Herd = DefaultHerd
	}
	d := &Diff{Options: opts}
	was, wasJobs := d.index(old)
	is, isJobs := d.index(new)
	week := opts.Start.Add(opts.Week)
	var touched []Job // the new config's jobs that the change adds or changes
	for _, id := range unionIDs(was, is) {
		o, hadOld := was[id]
		n, hasNew := is[id]
		jd := JobDiff{ID: id}
		switch {
		case !hadOld:
			jd.Change = Added
		case !hasNew:
			jd.Change = Removed
		case o.def.Equal(n.def):
			continue
		default:
			jd.Change = Changed
			if jd.Fields = changedFields(o.def, n.def); len(jd.Fields) == 0 {
				jd.Fields = []Field{{Name: "calendar days", Old: "as they were", New: "other days"}}
			}
		}
		var oldTimes, newTimes []time.Time
		if hadOld && o.ok {
			oldTimes = slices.Collect(o.job.Launches(opts.Start, week))
		}
		if hasNew && n.ok {
			newTimes = slices.Collect(n.job.Launches(opts.Start, week))
			touched = append(touched, n.job)
		}
		jd.Gone, jd.GoneCount = listed(minus(oldTimes, newTimes))
		jd.Come, jd.ComeCount = listed(minus(newTimes, oldTimes))
		d.Jobs = append(d.Jobs, jd)
	}
	d.herds(wasJobs, isJobs, was, touched)
	return d
}

// entry is a job of one config: its definition, and its job if its
// schedule parses.
type entry struct {
	def *engine.Definition
	job Job
	ok  bool
}

func (d *Diff) index(jobs []engine.Job) (map[string]entry, []Job) {
	out := map[string]entry{}
	var parsed []Job
	for i := range jobs {
		j := &jobs[i]
		if j.Disabled {
			continue
		}
		e := entry{def: &j.Definition}
		job, err := Of(j.ID, &j.Definition)
		if err != nil {
			d.Invalid = append(d.Invalid, fmt.Sprintf("%s: %v", j.ID, err))
		} else {
			e.job, e.ok = job, true
			parsed = append(parsed, job)
		}
		out[j.ID] = e
	}
	return out, parsed
}

// herds counts the launches per second of the day before and after, and
// names the seconds the change takes past the threshold, with the jobs
// it brings to them.
func (d *Diff) herds(old, new []Job, was map[string]entry, touched []Job) {
	before := Count(old, d.Start, d.Day, time.Second)
	after := Count(new, d.Start, d.Day, time.Second)
	d.BeforePeakAt, d.BeforePeak = before.Peak()
	d.AfterPeakAt, d.AfterPeak = after.Peak()
	d.BeforeLaunches, d.AfterLaunches = before.Total(), after.Total()
	herd := map[int]*Herd{}
	for i, n := range after.Counts {
		if n > d.Herd && n > before.Counts[i] {
			herd[i] = &Herd{At: d.Start.Add(time.Duration(i) * time.Second), Before: before.Counts[i], After: n}
		}
	}
	d.HerdSeconds = len(herd)
	if len(herd) == 0 {
		return
	}
	end := d.Start.Add(d.Day)
	for _, j := range touched {
		var had map[time.Time]bool
		if o, ok := was[j.ID]; ok && o.ok {
			had = map[time.Time]bool{}
			for t := range o.job.Launches(d.Start, end) {
				had[t.Truncate(time.Second)] = true
			}
		}
		for t := range j.Launches(d.Start, end) {
			h := herd[int(t.Sub(d.Start)/time.Second)]
			if h == nil || had[t.Truncate(time.Second)] {
				continue
			}
			if h.JobCount < MaxListed {
				expr := j.Schedule.String()
				h.Jobs = append(h.Jobs, Spread{ID: j.ID, Schedule: expr, Suggest: Spreading(expr)})
			}
			h.JobCount++
		}
	}
	all := make([]*Herd, 0, len(herd))
	for _, h := range herd {
		all = append(all, h)
	}
	slices.SortFunc(all, func(a, b *Herd) int {
		return cmp.Or(cmp.Compare(b.After, a.After), a.At.Compare(b.At))
	})
	for _, h := range all[:min(len(all), MaxListed)] {
		d.Herds = append(d.Herds, *h)
	}
}

func unionIDs(a, b map[string]entry) []string {
	var ids []string
	for id := range a {
		ids = append(ids, id)
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// minus returns the times of a, in order, that b does not hold.
func minus(a, b []time.Time) []time.Time {
	in := make(map[int64]bool, len(b))
	for _, t := range b {
		in[t.UnixNano()] = true
	}
	var out []time.Time
	for _, t := range a {
		if !in[t.UnixNano()] {
			out = append(out, t)
		}
	}
	return out
}

func listed(ts []time.Time) ([]time.Time, int) {
	return ts[:min(len(ts), MaxListed)], len(ts)
}
