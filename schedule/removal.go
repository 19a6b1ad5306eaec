package schedule

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// Window is a job's active window: its fire times are those from From to
// Until, both in. A zero bound leaves that side open.
type Window struct {
	From, Until time.Time
}

// IsZero reports whether the window bounds nothing.
func (w Window) IsZero() bool { return w.From.IsZero() && w.Until.IsZero() }

// RemovalKind says why a fire time of a schedule's expression is not one
// of the job's occurrences.
type RemovalKind int

const (
	// Kept: it is an occurrence.
	Kept RemovalKind = iota
	// BeforeWindow and AfterWindow: it falls outside the active window,
	// where the job has no occurrences at all.
	BeforeWindow
	AfterWindow
	// OnSkipped: its date is a day of a calendar the job skips.
	OnSkipped
	// OffOnly: its date is a day of none of the calendars the job runs
	// only on.
	OffOnly
)

// Removal is why a fire time is not an occurrence: its kind, and the
// calendars that decided it.
type Removal struct {
	Kind RemovalKind
	// Calendars names the calendar skipped (OnSkipped), or every
	// calendar the job runs only on (OffOnly).
	Calendars []string
}

// ByCalendar reports whether a calendar removed it, which a job records.
func (r Removal) ByCalendar() bool { return r.Kind == OnSkipped || r.Kind == OffOnly }

// String says why in words: "on holidays", "on none of business-days",
// "before the active window"; "" for a fire time kept.
func (r Removal) String() string {
	switch r.Kind {
	case BeforeWindow:
		return "before the active window"
	case AfterWindow:
		return "after the active window"
	case OnSkipped:
		return "on " + strings.Join(r.Calendars, ", ")
	case OffOnly:
		if len(r.Calendars) == 1 {
			return "not on " + r.Calendars[0]
		}
		return "on none of " + strings.Join(r.Calendars, ", ")
	}
	return ""
}

// filtered reports whether the schedule has a window or calendars.
func (s *Schedule) filtered() bool {
	return !s.window.IsZero() || len(s.skip) > 0 || len(s.only) > 0
}

// removal says whether the fire time u (a Unix time) is an occurrence and,
// when it is not, the instant from which the search for the next one may
// resume: nothing up to it can be one. forever: none after u is one.
func (s *Schedule) removal(u int64) (r Removal, resume int64, forever bool) {
	if w := s.window; !w.From.IsZero() && u < ceilUnix(w.From) {
		return Removal{Kind: BeforeWindow}, ceilUnix(w.From) - 1, false
	}
	if w := s.window; !w.Until.IsZero() && time.Unix(u, 0).After(w.Until) {
		return Removal{Kind: AfterWindow}, 0, true
	}
	for _, c := range s.skip {
		loc := s.calendarZone(c)
		if day := dayOf(loc, u); c.has(day) {
			r := Removal{Kind: OnSkipped, Calendars: []string{c.name}}
			out, ok := c.nextOut(day)
			if !ok {
				return r, 0, true
			}
			return r, dayStart(loc, out) - 1, false
		}
	}
	if len(s.only) == 0 {
		return Removal{}, 0, false
	}
	r = Removal{Kind: OffOnly}
	resume, forever = 0, true
	for _, c := range s.only {
		loc := s.calendarZone(c)
		day := dayOf(loc, u)
		if c.has(day) {
			return Removal{}, 0, false
		}
		r.Calendars = append(r.Calendars, c.name)
		if in, ok := c.nextIn(day + 1); ok {
			if start := dayStart(loc, in) - 1; forever || start < resume {
				resume, forever = start, false
			}
		}
	}
	return r, resume, forever
}

func (s *Schedule) calendarZone(c *Calendar) *time.Location {
	if c.loc != nil {
		return c.loc
	}
	return s.loc
}

// ceilUnix is t in whole seconds, rounded up.
func ceilUnix(t time.Time) int64 {
	u := t.Unix()
	if t.Nanosecond() > 0 {
		u++
	}
	return u
}

// nextKept returns the first occurrence strictly after u: the first fire
// time of the expression that the window and the calendars keep.
func (s *Schedule) nextKept(u int64) (int64, bool) {
	// Calendars that remove fire times for ever (a weekday skipped on
	// its only days) end the search where the expression's own does.
	if !s.filtered() {
		return s.nextAfter(u)
	}
	if end := s.endsBy.Load(); end != nil && u >= *end {
		return 0, false
	}
	from, last := u, u+cycleYears*366*86400
	for {
		t, ok := s.nextAfter(u)
		if !ok || t > last {
			s.endsBy.Store(&from)
			return 0, false
		}
		r, resume, forever := s.removal(t)
		switch {
		case r.Kind == Kept:
			return t, true
		case forever:
			s.endsBy.Store(&from)
			return 0, false
		}
		u = max(resume, t)
	}
}

// prevKept returns the latest occurrence at or before u.
func (s *Schedule) prevKept(u int64) (int64, bool) {
	first := u - cycleYears*366*86400
	for {
		t, ok := s.atOrBefore(u)
		if !ok {
			return 0, false
		}
		if !s.filtered() {
			return t, true
		}
		r, _, _ := s.removal(t)
		switch r.Kind {
		case Kept:
			return t, true
		case BeforeWindow:
			return 0, false
		case AfterWindow:
			u = s.window.Until.Unix()
		case OnSkipped:
			// Calendars are whole days: none of the calendar's days
			// before has an occurrence either.
			c := s.skip[slices.IndexFunc(s.skip, func(c *Calendar) bool { return c.name == r.Calendars[0] })]
			loc := s.calendarZone(c)
			out, ok := c.prevOut(dayOf(loc, t))
			if !ok {
				return 0, false
			}
			u = dayStart(loc, out+1) - 1
		case OffOnly:
			// Nor is any fire time before the latest day of one of the
			// calendars it runs only on.
			found := false
			for _, c := range s.only {
				loc := s.calendarZone(c)
				if in, ok := c.prevIn(dayOf(loc, t) - 1); ok {
					if end := dayStart(loc, in+1) - 1; !found || end > u {
						u, found = end, true
					}
				}
			}
			if !found {
				return 0, false
			}
		}
		if u < first {
			return 0, false
		}
	}
}

// FireTimes yields every fire time of the schedule's expression in [from,
// to), in order, each with why it is not an occurrence of the job (the zero
// Removal: it is one). Interval and triggered schedules yield nothing.
func (s *Schedule) FireTimes(from, to time.Time) iter.Seq2[time.Time, Removal] {
	return func(yield func(time.Time, Removal) bool) {
		if s.kind != Cron {
			return
		}
		for u, ok := s.nextAfter(ceilUnix(from) - 1); ok && time.Unix(u, 0).Before(to); u, ok = s.nextAfter(u) {
			var r Removal
			if s.filtered() {
				r, _, _ = s.removal(u)
			}
			if !yield(time.Unix(u, 0).In(s.loc), r) {
				return
			}
		}
	}
}

// CalendarSkipped yields the fire times in [from, to) within the active
// window that the job's calendars remove, in order, each with why in words
// (Removal.String). The engine records them, as GapSkipped's, so that an
// occurrence a calendar removes is never a silent one.
func (s *Schedule) CalendarSkipped(from, to time.Time) iter.Seq2[time.Time, string] {
	return func(yield func(time.Time, string) bool) {
		if s.kind != Cron || len(s.skip) == 0 && len(s.only) == 0 {
			return
		}
		for t, r := range s.FireTimes(from, to) {
			if r.Kind == AfterWindow {
				return
			}
			if r.ByCalendar() && !yield(t, r.String()) {
				return
			}
		}
	}
}

// ParseBound reads a bound of an active window: an RFC 3339 time, or a
// date (YYYY-MM-DD) on the wall clock of loc, which is the first instant
// of that day, or with end its last, so that a window "until" a date
// takes the whole day in.
func ParseBound(s string, loc *time.Location, end bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := ParseDate(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2026-01-31) nor an RFC 3339 time (2026-01-31T09:00:00-05:00)", s)
	}
	day := d.days()
	if end {
		return time.Unix(dayStart(loc, day+1), 0).Add(-time.Nanosecond).In(loc), nil
	}
	return time.Unix(dayStart(loc, day), 0).In(loc), nil
}
