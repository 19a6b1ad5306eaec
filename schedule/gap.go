package schedule

import (
	"math/bits"
	"time"
)

// ShortestGap returns the shortest time between two consecutive fire times
// of s over span, counted from its first fire time after from, and false
// if it has fewer than two there: a triggered schedule, or a rare one.
// An interval schedule's only gap is its interval.
//
// Its cost does not depend on how often s fires: an every-second schedule
// costs what a yearly one does. A cron schedule fires at the same times of
// day (its second, minute and hour sets) on each matching date, so its
// wall-clock gaps are those of the day's sorted times and of consecutive
// matching dates, each read off the bit sets; only around a change of UTC
// offset do real gaps differ from wall-clock ones, and those few are
// computed from the fire times there. The answer is never longer than the
// shortest real gap in the span; it is shorter only where the span has a
// wall-clock gap only across an offset change (a day of 24 hours that was
// 25 there) or cuts it off at its start: a gap of the schedule all the
// same, in other years.
func (s *Schedule) ShortestGap(from time.Time, span time.Duration) (time.Duration, bool) {
	var evaluated int
	return s.shortestGap(from, span, &evaluated)
}

// shortestGap is ShortestGap, counting in evaluated the fire times it
// computes: the work that a walk over every fire time would multiply.
func (s *Schedule) shortestGap(from time.Time, span time.Duration, evaluated *int) (time.Duration, bool) {
	switch s.kind {
	case Interval:
		return s.interval, true
	case Triggered:
		return 0, false
	}
	*evaluated++
	first, ok := s.nextAfter(from.Unix())
	if !ok {
		return 0, false
	}
	last := first + int64(span/time.Second)
	shortest, found := int64(0), false
	keep := func(gap int64) {
		if !found || gap < shortest {
			shortest, found = gap, true
		}
	}
	c := &s.cron
	day := c.day()
	if gap, ok := day.gap(); ok {
		keep(gap)
	}
	if days, ok := c.datesApart(s.localDay(first), s.localDay(last)); ok {
		keep(days*86400 - (day.last - day.first))
	}
	s.offsetChangeGaps(first, last, evaluated, keep)
	return time.Duration(shortest) * time.Second, found
}

// localDay is the day number (from 1970-01-01) of Unix time u on the
// schedule's wall clock.
func (s *Schedule) localDay(u int64) int64 {
	_, off := time.Unix(u, 0).In(s.loc).Zone()
	return floorDiv64(u+int64(off), 86400)
}

func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// offsetChangeGaps hands keep the real gaps around each change of UTC
// offset in [first, last]. The wall clock maps to real time by a constant
// between changes, and the DST policy applies the same way throughout, so
// a gap can differ from its wall-clock one only between fire times on
// either side of an instant where that breaks: the change itself, and
// for clocks going back also the start and the end of the repeated time,
// where RepeatLast starts and RepeatFirst stops skipping. So it looks at
// the last fire time before each of those instants and the two after it.
// A change up to a day (the most a zone has jumped) before first still
// matters: first may be the fire time it shifted, or in its repeat.
func (s *Schedule) offsetChangeGaps(first, last int64, evaluated *int, keep func(int64)) {
	for u := first - 86400 - 1; ; {
		p := periodAt(s.loc, u)
		if !p.bounded.end || p.end > last {
			return
		}
		at := []int64{p.end}
		if back := p.off - p.nextOff; back > 0 {
			at = append(at, p.end-back, p.end+back)
		}
		for _, q := range at {
			*evaluated++
			a, ok := s.atOrBefore(q - 1)
			for range 2 {
				if !ok {
					break
				}
				*evaluated++
				b, next := s.nextAfter(a)
				if next && a >= first && b <= last {
					keep(b - a)
				}
				a, ok = b, next
			}
		}
		u = p.end
	}
}

// daySet is the times of day a cron schedule fires at, in seconds from
// midnight: every combination of its hours, minutes and seconds.
type daySet struct {
	hour, min, sec uint64
	first, last    int64
}

func (c *cronSpec) day() daySet {
	d := daySet{hour: c.hour, min: c.min, sec: c.sec}
	d.first = int64(lowest(c.hour)*3600 + lowest(c.min)*60 + lowest(c.sec))
	d.last = int64(highest(c.hour)*3600 + highest(c.min)*60 + highest(c.sec))
	return d
}

// gap returns the shortest gap between consecutive times of the day, if
// it has two. In sorted order, consecutive times are seconds of one
// minute, the last second of a minute and the first of the next minute of
// the hour, or the last of an hour and the first of the next hour.
func (d daySet) gap() (int64, bool) {
	shortest, found := int64(0), false
	keep := func(gap int64) {
		if !found || gap < shortest {
			shortest, found = gap, true
		}
	}
	secSpan := int64(highest(d.sec) - lowest(d.sec))
	minSpan := int64(highest(d.min)-lowest(d.min))*60 + secSpan
	if g, ok := closest(d.sec); ok {
		keep(g)
	}
	if g, ok := closest(d.min); ok {
		keep(g*60 - secSpan)
	}
	if g, ok := closest(d.hour); ok {
		keep(g*3600 - minSpan)
	}
	return shortest, found
}

// datesApart returns the fewest days between two consecutive matching
// dates in the days from and to, if two match.
func (c *cronSpec) datesApart(from, to int64) (int64, bool) {
	y, m, _ := civilFromDays(from)
	prev, fewest, found := int64(0), int64(0), false
	seen := false
	for ; ; y, m = y+m/12, m%12+1 {
		start := daysFromCivil(y, m, 1)
		if start > to {
			return fewest, found
		}
		if c.month&(1<<uint(m)) == 0 || c.years != nil && !c.years.has(y) {
			continue
		}
		for days := c.days.in(y, m); days != 0; days &= days - 1 {
			d := start + int64(bits.TrailingZeros32(days)) - 1
			if d < from || d > to {
				continue
			}
			if seen && (!found || d-prev < fewest) {
				fewest, found = d-prev, true
			}
			prev, seen = d, true
		}
	}
}

// closest returns the smallest difference between two values of a set,
// if it has two.
func closest(set uint64) (int64, bool) {
	smallest, found := 0, false
	for prev := -1; set != 0; set &= set - 1 {
		v := bits.TrailingZeros64(set)
		if prev >= 0 && (!found || v-prev < smallest) {
			smallest, found = v-prev, true
		}
		prev = v
	}
	return int64(smallest), found
}

func lowest(set uint64) int  { return bits.TrailingZeros64(set) }
func highest(set uint64) int { return 63 - bits.LeadingZeros64(set) }
