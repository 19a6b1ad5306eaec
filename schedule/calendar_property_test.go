package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// calendarExprs are the expressions the calendar property draws from: some
// fire in DST gaps and repeats, some around midnight, where a zone's date
// and another's differ.
var calendarExprs = []string{
	"0 * * * *", "*/20 * * * *", "30 2 * * *", "0 0 * * *", "59 23 * * *",
	"0,30 0-3 * * *", "15 1 * * 0", "0 12 * * 1-5", "0 9 1 * *", "30 0 * * 6,0",
}

// calendarOracle is a calendar as written: its weekdays and its ranges,
// unmerged, checked with the time package only.
type calendarOracle struct {
	name     string
	loc      *time.Location // nil: the schedule's
	weekdays []time.Weekday
	ranges   []DateRange
}

func (c calendarOracle) has(t time.Time, schedLoc *time.Location) bool {
	loc := c.loc
	if loc == nil {
		loc = schedLoc
	}
	lt := t.In(loc)
	if slices.Contains(c.weekdays, lt.Weekday()) {
		return true
	}
	y, m, d := lt.Date()
	day := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	for _, r := range c.ranges {
		first := time.Date(r.First.Year, r.First.Month, r.First.Day, 12, 0, 0, 0, time.UTC)
		last := time.Date(r.Last.Year, r.Last.Month, r.Last.Day, 12, 0, 0, 0, time.UTC)
		if !day.Before(first) && !day.After(last) {
			return true
		}
	}
	return false
}

func randomCalendar(r *rand.Rand, name string, around time.Time) calendarOracle {
	c := calendarOracle{name: name}
	switch r.IntN(3) {
	case 0:
		c.loc = nil
	case 1:
		c.loc = time.UTC
	default:
		loc, _ := time.LoadLocation(propZones[r.IntN(len(propZones))])
		c.loc = loc
	}
	if r.IntN(3) == 0 {
		for w := range 7 {
			if r.IntN(4) == 0 {
				c.weekdays = append(c.weekdays, time.Weekday(w))
			}
		}
	}
	for range r.IntN(8) {
		first := around.AddDate(0, 0, r.IntN(120)-60)
		last := first.AddDate(0, 0, r.IntN(3)*r.IntN(6))
		c.ranges = append(c.ranges, DateRange{DateOf(first), DateOf(last)})
	}
	return c
}

// TestCalendarWindowProperties checks, in every zone of propZones, random
// schedules under random calendars (in the schedule's zone or their own)
// and active windows against an oracle that decides each fire time of the
// unbounded schedule from its date on each calendar's wall clock: the
// occurrences are exactly the fire times none removes, FireTimes names each
// removed one with the reason that removes it, CalendarSkipped yields
// exactly those a calendar removes within the window, and Next and Prev
// from random instants agree.
func TestCalendarWindowProperties(t *testing.T) {
	t.Parallel()
	cases := 60
	if testing.Short() {
		cases = 12
	}
	for zi, zone := range propZones {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			transitions := propTransitions(loc)
			for c := range cases {
				r := rand.New(rand.NewPCG(*propSeed+uint64(c), uint64(zi)))
				around := time.Date(2021+r.IntN(6), time.Month(1+r.IntN(12)), 1, 0, 0, 0, 0, loc)
				if tr := recentTransitions(transitions); len(tr) > 0 && r.IntN(2) == 0 {
					around = time.Unix(tr[r.IntN(len(tr))], 0).In(loc)
				}
				checkCalendarCase(t, r, c, loc, around)
			}
		})
	}
}

// recentTransitions are the transitions of 1990 to 2030.
func recentTransitions(all []int64) []int64 {
	lo, hi := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	var out []int64
	for _, u := range all {
		if u >= lo && u < hi {
			out = append(out, u)
		}
	}
	return out
}

func checkCalendarCase(t *testing.T, r *rand.Rand, c int, loc *time.Location, around time.Time) {
	t.Helper()
	expr := calendarExprs[r.IntN(len(calendarExprs))]
	opts := Options{JobID: "p/j", Location: loc, Gap: []Gap{GapDefault, GapSkip, GapShift}[r.IntN(3)],
		Repeat: []Repeat{RepeatDefault, RepeatFirst, RepeatLast, RepeatBoth}[r.IntN(4)]}
	plain, err := Parse(expr, opts)
	if err != nil {
		t.Fatal(err)
	}
	var skip, only []calendarOracle
	for i := range r.IntN(3) {
		skip = append(skip, randomCalendar(r, fmt.Sprintf("skip%d", i), around))
	}
	for i := range r.IntN(3) {
		only = append(only, randomCalendar(r, fmt.Sprintf("only%d", i), around))
	}
	build := func(cs []calendarOracle) []*Calendar {
		var out []*Calendar
		for _, o := range cs {
			cal, err := NewCalendar(o.name, o.loc, o.weekdays, o.ranges)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, cal)
		}
		return out
	}
	opts.Skip, opts.Only = build(skip), build(only)
	if r.IntN(2) == 0 {
		opts.Active.From = around.Add(time.Duration(r.IntN(40*24)-20*24) * time.Hour).Add(time.Duration(r.IntN(3600)) * time.Second)
	}
	if r.IntN(2) == 0 {
		opts.Active.Until = around.Add(time.Duration(r.IntN(40*24)) * time.Hour).Add(time.Duration(r.IntN(3600)) * time.Second)
		if opts.Active.Until.Before(opts.Active.From) {
			opts.Active.From, opts.Active.Until = opts.Active.Until, opts.Active.From
		}
	}
	s, err := Parse(expr, opts)
	if err != nil {
		t.Fatal(err)
	}
	from, to := around.AddDate(0, 0, -70), around.AddDate(0, 0, 70)
	where := fmt.Sprintf("case %d: %q in %s, skip %+v, only %+v, window %v", c, expr, loc, skip, only, opts.Active)

	want := func(at time.Time) Removal {
		w := opts.Active
		switch {
		case !w.From.IsZero() && at.Before(w.From):
			return Removal{Kind: BeforeWindow}
		case !w.Until.IsZero() && at.After(w.Until):
			return Removal{Kind: AfterWindow}
		}
		for _, o := range skip {
			if o.has(at, loc) {
				return Removal{Kind: OnSkipped, Calendars: []string{o.name}}
			}
		}
		var names []string
		for _, o := range only {
			if o.has(at, loc) {
				return Removal{}
			}
			names = append(names, o.name)
		}
		if len(names) > 0 {
			return Removal{Kind: OffOnly, Calendars: names}
		}
		return Removal{}
	}

	var raw, kept, byCalendar []time.Time
	for at := range plain.Between(from, to) {
		raw = append(raw, at)
		switch rm := want(at); {
		case rm.Kind == Kept:
			kept = append(kept, at)
		case rm.ByCalendar():
			byCalendar = append(byCalendar, at)
		}
	}
	i := 0
	for at, rm := range s.FireTimes(from, to) {
		if i >= len(raw) || !at.Equal(raw[i]) {
			t.Fatalf("%s: FireTimes yields %s as fire time %d, want %v", where, at, i, raw[min(i, len(raw)-1)])
		}
		if w := want(at); w.Kind != rm.Kind || !slices.Equal(w.Calendars, rm.Calendars) {
			t.Fatalf("%s: FireTimes says %s is %q, want %q", where, at, rm, w)
		}
		i++
	}
	if i != len(raw) {
		t.Fatalf("%s: FireTimes yields %d fire times, want %d", where, i, len(raw))
	}
	if got := slices.Collect(s.Between(from, to)); !sameTimes(got, kept) {
		t.Fatalf("%s: occurrences\n got %v\nwant %v", where, got, kept)
	}
	var skipped []time.Time
	for at, why := range s.CalendarSkipped(from, to) {
		if w := want(at); why != w.String() {
			t.Fatalf("%s: CalendarSkipped says %s is %q, want %q", where, at, why, w)
		}
		skipped = append(skipped, at)
	}
	if !sameTimes(skipped, byCalendar) {
		t.Fatalf("%s: CalendarSkipped\n got %v\nwant %v", where, skipped, byCalendar)
	}
	for range 20 {
		x := from.Add(time.Duration(r.Int64N(int64(to.Sub(from) - 30*24*time.Hour))))
		k := slices.IndexFunc(kept, func(at time.Time) bool { return at.After(x) })
		got, ok := s.Next(x)
		if k >= 0 && (!ok || !got.Equal(kept[k])) {
			t.Fatalf("%s: Next(%s) = %s %v, want %s", where, x, got, ok, kept[k])
		}
		if k < 0 && ok && got.Before(to) {
			t.Fatalf("%s: Next(%s) = %s, want none before %s", where, x, got, to)
		}
		y := x.Add(30 * 24 * time.Hour)
		p := -1
		for i, at := range kept {
			if !at.After(y) {
				p = i
			}
		}
		got, ok = s.Prev(y)
		if p >= 0 && (!ok || !got.Equal(kept[p])) {
			t.Fatalf("%s: Prev(%s) = %s %v, want %s", where, y, got, ok, kept[p])
		}
		if p < 0 && ok && !got.Before(from) {
			t.Fatalf("%s: Prev(%s) = %s, want none after %s", where, y, got, from)
		}
	}
}

func sameTimes(a, b []time.Time) bool {
	return slices.EqualFunc(a, b, time.Time.Equal)
}
