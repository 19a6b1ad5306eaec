package config

import (
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
)

// The jitter check walks a schedule's fire times from a fixed instant, so
// that `sundial validate` gives the same answer on any day: for a year, or
// for periodCheckLimit fire times when a schedule fires more often than
// that. Cron fields repeat every day, month or year, so the shortest gap
// shows up well within either bound.
var periodCheckFrom = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	periodCheckSpan  = 366 * 24 * time.Hour
	periodCheckLimit = 20000
)

// gapWithin returns a gap between two consecutive fire times of s that is
// at most max, if it finds one: a jitter that large could reorder them. An
// interval schedule's only gap is its interval; a triggered one has none.
func gapWithin(s *schedule.Schedule, max time.Duration) (time.Duration, bool) {
	switch s.Kind() {
	case schedule.Interval:
		return s.Interval(), s.Interval() <= max
	case schedule.Triggered:
		return 0, false
	}
	prev, ok := s.Next(periodCheckFrom)
	if !ok {
		return 0, false
	}
	end := prev.Add(periodCheckSpan)
	for range periodCheckLimit {
		next, ok := s.Next(prev)
		if !ok || next.After(end) {
			return 0, false
		}
		if gap := next.Sub(prev); gap <= max {
			return gap, true
		}
		prev = next
	}
	return 0, false
}

// gapKey is what a jitter check's answer depends on, for a schedule without
// hashed fields (with them, it depends on the job id too).
type gapKey struct {
	schedule, zone, gap, repeat string
	jitter                      time.Duration
}

type gapResult struct {
	gap   time.Duration
	short bool
}

// gapWithin is the package's gapWithin, remembered across the jobs of a
// file: a check walks up to periodCheckLimit fire times, and a big project
// tends to repeat its schedules.
func (d *decoder) gapWithin(s *schedule.Schedule, def engine.Definition) (time.Duration, bool) {
	if strings.ContainsAny(def.Schedule, "Hh") {
		return gapWithin(s, def.Policy.Jitter)
	}
	k := gapKey{def.Schedule, def.TimeZone, def.Gap, def.Repeat, def.Policy.Jitter}
	if r, ok := d.gaps[k]; ok {
		return r.gap, r.short
	}
	gap, short := gapWithin(s, def.Policy.Jitter)
	if d.gaps == nil {
		d.gaps = map[gapKey]gapResult{}
	}
	d.gaps[k] = gapResult{gap, short}
	return gap, short
}
