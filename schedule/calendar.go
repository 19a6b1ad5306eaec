package schedule

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Calendar is a named set of days: dates, ranges of dates and weekdays, as
// they fall in one time zone. A job skips the days of some calendars
// (Options.Skip) and runs only on the days of others (Options.Only); a
// fire time is on a calendar's day when its date, on the calendar's wall
// clock, is one of them. A Calendar is immutable.
type Calendar struct {
	name     string
	loc      *time.Location // nil: the zone of the schedule that uses it
	weekdays uint8          // bit w: every day of weekday w (0 = Sunday)
	ranges   []dayRange     // sorted, disjoint and not adjacent
}

// Date is a day of the Gregorian calendar, with no time zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateRange is the days from First to Last, both in.
type DateRange struct{ First, Last Date }

// dayRange is a DateRange in days from 1970-01-01.
type dayRange struct{ first, last int64 }

// ParseDate parses a date written YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date written YYYY-MM-DD", s)
	}
	return DateOf(t), nil
}

// DateOf returns the date of t on its own wall clock.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

func (d Date) days() int64 { return daysFromCivil(d.Year, int(d.Month), d.Day) }

func dateOfDays(n int64) Date {
	y, m, d := civilFromDays(n)
	return Date{y, time.Month(m), d}
}

// NewCalendar returns the calendar name of the given weekdays and date
// ranges, in loc (nil: the zone of each schedule that uses it). Ranges may
// overlap and come in any order. It fails for a range that ends before it
// starts, or a date outside the years a schedule can fire in.
func NewCalendar(name string, loc *time.Location, weekdays []time.Weekday, ranges []DateRange) (*Calendar, error) {
	c := &Calendar{name: name, loc: loc}
	for _, w := range weekdays {
		c.weekdays |= 1 << uint(w%7)
	}
	rs := make([]dayRange, 0, len(ranges))
	for _, r := range ranges {
		for _, d := range []Date{r.First, r.Last} {
			if d.Year < minYear || d.Year > maxYear {
				return nil, fmt.Errorf("%s: a calendar's dates are in the years %d to %d", d, minYear, maxYear)
			}
		}
		first, last := r.First.days(), r.Last.days()
		if last < first {
			return nil, fmt.Errorf("%s to %s: the range ends before it starts", r.First, r.Last)
		}
		rs = append(rs, dayRange{first, last})
	}
	slices.SortFunc(rs, func(a, b dayRange) int { return int(a.first - b.first) })
	for _, r := range rs {
		if n := len(c.ranges); n > 0 && r.first <= c.ranges[n-1].last+1 {
			c.ranges[n-1].last = max(c.ranges[n-1].last, r.last)
			continue
		}
		c.ranges = append(c.ranges, r)
	}
	return c, nil
}

// Name returns the calendar's name.
func (c *Calendar) Name() string { return c.name }

// Location returns the calendar's time zone; nil means the zone of each
// schedule that uses it.
func (c *Calendar) Location() *time.Location { return c.loc }

// Weekdays returns the weekdays every one of which is in the calendar.
func (c *Calendar) Weekdays() []time.Weekday {
	var ws []time.Weekday
	for w := range 7 {
		if c.weekdays&(1<<uint(w)) != 0 {
			ws = append(ws, time.Weekday(w))
		}
	}
	return ws
}

// Ranges returns the calendar's dates as sorted ranges, overlapping and
// adjacent ones merged.
func (c *Calendar) Ranges() []DateRange {
	out := make([]DateRange, len(c.ranges))
	for i, r := range c.ranges {
		out[i] = DateRange{dateOfDays(r.first), dateOfDays(r.last)}
	}
	return out
}

// Equal reports whether c and o are the same days in the same zone, under
// the same name.
func (c *Calendar) Equal(o *Calendar) bool {
	return c.name == o.name && zoneName(c.loc) == zoneName(o.loc) && c.weekdays == o.weekdays && slices.Equal(c.ranges, o.ranges)
}

func zoneName(loc *time.Location) string {
	if loc == nil {
		return ""
	}
	return loc.String()
}

// Has reports whether the date d is one of the calendar's days.
func (c *Calendar) Has(d Date) bool { return c.has(d.days()) }

func (c *Calendar) has(day int64) bool {
	if c.weekdays&(1<<uint(weekdayOfDays(day))) != 0 {
		return true
	}
	i := sort.Search(len(c.ranges), func(i int) bool { return c.ranges[i].last >= day })
	return i < len(c.ranges) && c.ranges[i].first <= day
}

// nextIn returns the first of the calendar's days at or after day.
func (c *Calendar) nextIn(day int64) (int64, bool) {
	best, found := int64(0), false
	if c.weekdays != 0 {
		for d := day; d < day+7; d++ {
			if c.weekdays&(1<<uint(weekdayOfDays(d))) != 0 {
				best, found = d, true
				break
			}
		}
	}
	i := sort.Search(len(c.ranges), func(i int) bool { return c.ranges[i].last >= day })
	if i < len(c.ranges) {
		if d := max(c.ranges[i].first, day); !found || d < best {
			best, found = d, true
		}
	}
	return best, found
}

// nextOut returns the first day at or after day that is not one of the
// calendar's; none if it has every weekday.
func (c *Calendar) nextOut(day int64) (int64, bool) {
	if c.weekdays == 0x7f {
		return 0, false
	}
	for d := day; ; {
		if !c.has(d) {
			return d, true
		}
		if c.weekdays&(1<<uint(weekdayOfDays(d))) != 0 {
			d++
			continue
		}
		i := sort.Search(len(c.ranges), func(i int) bool { return c.ranges[i].last >= d })
		d = c.ranges[i].last + 1
	}
}

// prevIn returns the last of the calendar's days at or before day.
func (c *Calendar) prevIn(day int64) (int64, bool) {
	best, found := int64(0), false
	if c.weekdays != 0 {
		for d := day; d > day-7; d-- {
			if c.weekdays&(1<<uint(weekdayOfDays(d))) != 0 {
				best, found = d, true
				break
			}
		}
	}
	i := sort.Search(len(c.ranges), func(i int) bool { return c.ranges[i].first > day }) - 1
	if i >= 0 {
		if d := min(c.ranges[i].last, day); !found || d > best {
			best, found = d, true
		}
	}
	return best, found
}

// prevOut returns the last day at or before day that is not one of the
// calendar's; none if it has every weekday.
func (c *Calendar) prevOut(day int64) (int64, bool) {
	if c.weekdays == 0x7f {
		return 0, false
	}
	for d := day; ; {
		if !c.has(d) {
			return d, true
		}
		if c.weekdays&(1<<uint(weekdayOfDays(d))) != 0 {
			d--
			continue
		}
		i := sort.Search(len(c.ranges), func(i int) bool { return c.ranges[i].first > d }) - 1
		d = c.ranges[i].first - 1
	}
}

// String describes the calendar in words: "holidays (12 dates from
// 2026-01-01 to 2026-12-26)", "business-days (Monday through Friday)".
func (c *Calendar) String() string {
	var parts []string
	if ws := c.Weekdays(); len(ws) > 0 {
		parts = append(parts, weekdaysText(ws))
	}
	if n := len(c.ranges); n > 0 {
		days := int64(0)
		for _, r := range c.ranges {
			days += r.last - r.first + 1
		}
		parts = append(parts, fmt.Sprintf("%d %s from %s to %s", days, plural(int(days), "date"), dateOfDays(c.ranges[0].first), dateOfDays(c.ranges[n-1].last)))
	}
	if len(parts) == 0 {
		parts = append(parts, "no days")
	}
	s := c.name + " (" + strings.Join(parts, " and ")
	if c.loc != nil {
		s += ", " + c.loc.String()
	}
	return s + ")"
}

// weekdaysText names weekdays, a run of three or more as "Monday through
// Friday".
func weekdaysText(ws []time.Weekday) string {
	var parts []string
	for i := 0; i < len(ws); {
		j := i
		for j+1 < len(ws) && ws[j+1] == ws[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, weekdayNames[ws[i]]+" through "+weekdayNames[ws[j]])
		default:
			for k := i; k <= j; k++ {
				parts = append(parts, weekdayNames[ws[k]])
			}
		}
		i = j + 1
	}
	return joinAnd(parts)
}

// dayOf returns the day (from 1970-01-01) of Unix time u on the wall clock
// of loc.
func dayOf(loc *time.Location, u int64) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return floorDiv64(u+int64(off), 86400)
}

// dayStart returns the first second of day on the wall clock of loc: the
// first whose date is day or later. Midnight at the offset in force then
// nearly always is it; a day whose midnight does not exist (clocks that
// spring forward at midnight) or happens twice is found by bisection.
func dayStart(loc *time.Location, day int64) int64 {
	local := day * 86400
	_, off := time.Unix(local, 0).In(loc).Zone()
	if u := local - int64(off); dayOf(loc, u) == day && dayOf(loc, u-1) < day {
		return u
	}
	// No zone is more than 26 hours from UTC.
	lo, hi := local-26*3600, local+26*3600
	for lo < hi {
		mid := lo + (hi-lo)/2
		if dayOf(loc, mid) >= day {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
