// Package schedule parses job schedules and computes their fire times.
//
// A schedule is parsed once (Parse) and is then immutable and safe for
// concurrent use. Fire times are computed on the schedule's wall clock with
// bit sets, one UTC-offset period at a time, so that time zones and daylight
// saving transitions follow an explicit, per-schedule DST policy (Gap and
// Repeat) instead of whatever time.Date happens to do.
//
// The package does no I/O beyond loading time zones and never reads the clock:
// every answer is a function of the schedule and the instant it is given.
package schedule

import (
	"iter"
	"sync/atomic"
	"time"
)

// Kind says how a schedule decides its fire times.
type Kind int

const (
	// Cron schedules fire at the wall-clock times their fields match.
	Cron Kind = iota
	// Interval schedules ("@every 90s", "with 10m interval") fire a fixed
	// duration after the previous invocation ended; Next measures from the
	// instant it is given, which the engine passes as that end.
	Interval
	// Triggered schedules never fire by themselves.
	Triggered
)

func (k Kind) String() string {
	switch k {
	case Interval:
		return "interval"
	case Triggered:
		return "triggered"
	}
	return "cron"
}

// Options are the parts of a schedule that live outside its expression.
type Options struct {
	// JobID seeds the hashed fields (H): the same id always gets the same
	// values. Expressions with H are refused without one.
	JobID string
	// Location is the time zone of the schedule; nil means UTC. A CRON_TZ=
	// or TZ= prefix in the expression sets it too; the two must agree.
	Location *time.Location
	// Gap and Repeat are the DST policy; their zero values pick the default
	// for the expression (see Gap and Repeat).
	Gap    Gap
	Repeat Repeat
	// Active is the job's active window: no fire time outside it is an
	// occurrence. Triggered schedules may not have one.
	Active Window
	// Skip are the calendars whose days have no occurrences, and Only,
	// if any, the calendars on whose days alone there are: a fire time on
	// a day of none of them is not an occurrence. Only cron schedules may
	// have calendars.
	Skip, Only []*Calendar
}

// Schedule is a parsed schedule.
type Schedule struct {
	expr     string
	kind     Kind
	interval time.Duration
	loc      *time.Location
	gap      Gap
	repeat   Repeat
	jobID    string
	window   Window
	skip     []*Calendar
	only     []*Calendar
	// endsBy, once known, is an instant after which no fire time is an
	// occurrence: calendars that remove every later one cost a search of
	// the whole Gregorian cycle, which then need not be repeated.
	endsBy atomic.Pointer[int64]
	cron   cronSpec
	fields []field // the parsed cron fields, while parsing and in Explain
}

// String returns the expression the schedule was parsed from.
func (s *Schedule) String() string { return s.expr }

// Kind returns how the schedule decides its fire times.
func (s *Schedule) Kind() Kind { return s.kind }

// Interval returns the interval of an Interval schedule, and 0 otherwise.
func (s *Schedule) Interval() time.Duration { return s.interval }

// Location returns the schedule's time zone.
func (s *Schedule) Location() *time.Location { return s.loc }

// Gap returns the policy for wall-clock times that do not exist, with the
// default resolved. Interval and Triggered schedules have no wall-clock
// times, so for them it is whatever Options asked for, unused.
func (s *Schedule) Gap() Gap { return s.gap }

// Repeat returns the policy for wall-clock times that happen twice, with the
// default resolved. Like Gap, it is unused by Interval and Triggered
// schedules.
func (s *Schedule) Repeat() Repeat { return s.repeat }

// Window returns the schedule's active window.
func (s *Schedule) Window() Window { return s.window }

// Skip returns the calendars whose days have no occurrences.
func (s *Schedule) Skip() []*Calendar { return s.skip }

// Only returns the calendars on whose days alone there are occurrences;
// none means every day.
func (s *Schedule) Only() []*Calendar { return s.only }

// Next returns the first fire time strictly after t that is an occurrence
// (within the active window, and kept by the calendars), in the schedule's
// time zone, and false if there is none: a Triggered schedule, a schedule
// whose year field or window has run out, or whose calendars remove every
// later fire time. For an Interval schedule it is t plus the interval, or
// the window's start if that is later.
func (s *Schedule) Next(t time.Time) (time.Time, bool) {
	switch s.kind {
	case Triggered:
		return time.Time{}, false
	case Interval:
		n := t.Add(s.interval)
		if w := s.window; !w.From.IsZero() && n.Before(w.From) {
			n = w.From
		}
		if w := s.window; !w.Until.IsZero() && n.After(w.Until) {
			return time.Time{}, false
		}
		return n.In(s.loc), true
	}
	u, ok := s.nextKept(t.Unix())
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(u, 0).In(s.loc), true
}

// Prev returns the latest fire time at or before t that is an occurrence,
// and false if there is none. Interval and Triggered schedules have no fixed fire times and always
// return false; the engine measures an Interval from the previous invocation.
func (s *Schedule) Prev(t time.Time) (time.Time, bool) {
	if s.kind != Cron {
		return time.Time{}, false
	}
	u, ok := s.prevKept(t.Unix())
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(u, 0).In(s.loc), true
}

// Between yields the occurrences in [from, to), in order. An Interval
// schedule yields from+interval, from+2*interval, ..., as if every
// invocation ended the moment it started.
func (s *Schedule) Between(from, to time.Time) iter.Seq[time.Time] {
	return func(yield func(time.Time) bool) {
		after := from.Add(-time.Nanosecond) // Next is strictly after; from itself is in
		if s.kind == Interval {
			after = from
		}
		t, ok := s.Next(after)
		for ; ok && t.Before(to); t, ok = s.Next(t) {
			if !yield(t) {
				return
			}
		}
	}
}
