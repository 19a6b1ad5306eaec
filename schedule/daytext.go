package schedule

import (
	"fmt"
	"strings"
	"time"
)

var weekdayAbbrev = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// weekday reads a weekday's name, of three letters or whole.
func weekday(s string) (time.Weekday, bool) {
	s = strings.ToLower(s)
	for short, w := range weekdayAbbrev {
		if s == short || s == strings.ToLower(w.String()) {
			return w, true
		}
	}
	return 0, false
}

// ParseWeekdays reads a weekday (mon, or monday) or a range of them
// (mon-fri, fri-mon), as a calendar's weekdays are written.
func ParseWeekdays(s string) ([]time.Weekday, bool) {
	lo, hi, isRange := strings.Cut(s, "-")
	from, ok1 := weekday(lo)
	to, ok2 := from, true
	if isRange {
		to, ok2 = weekday(hi)
	}
	if !ok1 || !ok2 {
		return nil, false
	}
	var out []time.Weekday
	for w := from; ; w = (w + 1) % 7 {
		out = append(out, w)
		if w == to {
			return out, true
		}
	}
}

// ParseDateRange reads a date (2026-12-25) or a range of dates
// (2026-12-24..2026-12-31), as a calendar's dates are written. ok is
// false for text that is neither; err says why one that is cannot be a
// calendar's.
func ParseDateRange(s string) (r DateRange, ok bool, err error) {
	lo, hi, isRange := strings.Cut(s, "..")
	first, err := ParseDate(lo)
	last := first
	if err == nil && isRange {
		last, err = ParseDate(hi)
	}
	if err != nil {
		return r, false, nil
	}
	r = DateRange{First: first, Last: last}
	_, err = NewCalendar("", nil, nil, []DateRange{r})
	return r, true, err
}

// CalendarText reads a calendar typed on one line, as the console's
// playground takes it: weekdays, ranges of them, dates and ranges of
// dates as a config's calendars write them, apart by commas or spaces
// ("sat-sun, 2026-12-24..2026-12-26, 2027-01-01"). Its days are on the
// wall clock of each schedule that uses it.
func CalendarText(name, text string) (*Calendar, error) {
	var weekdays []time.Weekday
	var ranges []DateRange
	for _, item := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		if ws, ok := ParseWeekdays(item); ok {
			weekdays = append(weekdays, ws...)
			continue
		}
		r, ok, err := ParseDateRange(item)
		switch {
		case !ok:
			return nil, fmt.Errorf("%q: want a weekday (mon), a range of them (mon-fri), a date (2026-12-25) or a range of dates (2026-12-24..2026-12-31)", clip(item))
		case err != nil:
			return nil, err
		}
		ranges = append(ranges, r)
	}
	if len(weekdays) == 0 && len(ranges) == 0 {
		return nil, fmt.Errorf("no days: write weekdays (sat-sun) or dates (2026-12-25, 2026-12-24..2026-12-26)")
	}
	return NewCalendar(name, nil, weekdays, ranges)
}

// clip shortens what was typed to quote it back.
func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
