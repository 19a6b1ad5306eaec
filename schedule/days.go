package schedule

import "math/bits"

// daySpec is the day-of-month and day-of-week fields together: which days
// of a given month match depends on both, on the month's length and on the
// weekday it starts with.
type daySpec struct {
	// or is the classic cron rule: when both fields are restricted a day
	// matches if either matches; when either field starts with '*' (or is
	// '?') a day must match both, as Vixie cron and cronie do.
	or bool
	// every is set when neither field restricts anything: every day matches.
	every bool

	dom      uint32 // plain days of month, bits 1..31
	domLast  uint32 // L-k: bit k set for k days before the last day
	lastWDay bool   // LW: the last weekday (Mon-Fri) of the month
	nearest  uint32 // kW: bit k set for the weekday nearest day k

	dow     uint8    // plain weekdays, bit 0 = Sunday
	dowLast uint8    // wL: bit w set for the last weekday w of the month
	dowNth  [7]uint8 // w#k: bit k of dowNth[w] set for the k-th weekday w

	// shapes has bit (n-28)*7+w set when a month of n days starting on
	// weekday w has a matching day; it decides "never fires" at parse time.
	shapes uint32

	// domRules and dowRules say whether L or W (day of month) and L or #
	// (day of week) are used: only then does match need more than the two
	// plain sets.
	domRules, dowRules bool
}

const (
	allDays     = ^uint32(1)      // bits 1..31
	allWeekdays = uint8(1)<<7 - 1 // bits 0..6
)

// finish records whether L, W or # is used and which month shapes (length,
// first weekday) have at least one matching day.
func (s *daySpec) finish() {
	s.domRules = s.domLast != 0 || s.lastWDay || s.nearest != 0
	s.dowRules = s.dowLast != 0 || s.dowNth != [7]uint8{}
	if s.dom == allDays && s.dow == allWeekdays {
		// Both fields are * (or list everything), as in most schedules:
		// every day of every month matches, whichever way they combine.
		s.every, s.shapes = true, 1<<28-1
		return
	}
	s.every = true
	for n := 28; n <= 31; n++ {
		valid := uint32(1)<<uint(n+1) - 2
		for first := range 7 {
			m := s.match(n, first) & valid
			if m != 0 {
				s.shapes |= 1 << uint((n-28)*7+first)
			}
			if m != valid {
				s.every = false
			}
		}
	}
}

// occurs reports whether some day matches in month m of year y.
func (s *daySpec) occurs(y, m int) bool {
	n := monthLen(y, m)
	return s.shapes&(1<<uint((n-28)*7+weekdayOfDays(daysFromCivil(y, m, 1)))) != 0
}

// occursInMonth reports whether some day matches in month m of some year.
// Every (length, first weekday) shape a month can have occurs in the
// 400-year Gregorian cycle, so this is exact.
func (s *daySpec) occursInMonth(m int) bool {
	shapes := s.shapes >> uint((monthLen(2001, m)-28)*7) & 0x7f
	if m == 2 {
		shapes |= s.shapes >> 7 & 0x7f // the 29-day Februaries of leap years
	}
	return shapes != 0
}

// in returns the matching days of month m of year y as bits 1..31.
func (s *daySpec) in(y, m int) uint32 {
	n := monthLen(y, m)
	valid := uint32(1)<<uint(n+1) - 2
	if s.every {
		return valid
	}
	return s.match(n, weekdayOfDays(daysFromCivil(y, m, 1))) & valid
}

// match returns the matching days of a month of n days whose first day is
// weekday first.
func (s *daySpec) match(n, first int) uint32 {
	dom, dow := s.dom, s.dowDays(first)
	if s.domRules {
		dom |= s.domSpecial(n, first)
	}
	if s.dowRules {
		dow |= s.dowSpecial(n, first)
	}
	if s.or {
		return dom | dow
	}
	return dom & dow
}

// dowDays returns the plain day-of-week set as the days of a month whose
// first day is weekday first.
func (s *daySpec) dowDays(first int) uint32 {
	// Rotate the weekdays so that bit 0 is weekday first, the weekday of
	// day 1, then repeat that week over days 1..31 (what a week shifts past
	// bit 31 falls off).
	dow := uint32(s.dow)
	week := (dow>>uint(first) | dow<<uint(7-first)) & 0x7f
	return week<<1 | week<<8 | week<<15 | week<<22 | week<<29
}

// domSpecial returns the days that L, LW and nW of the day-of-month field
// select in a month of n days whose first day is weekday first.
func (s *daySpec) domSpecial(n, first int) uint32 {
	var dom uint32
	for k := s.domLast; k != 0; k &= k - 1 {
		if d := n - bits.TrailingZeros32(k); d >= 1 {
			dom |= 1 << uint(d)
		}
	}
	if s.lastWDay {
		d := n
		switch (first + n - 1) % 7 {
		case 6:
			d = n - 1
		case 0:
			d = n - 2
		}
		dom |= 1 << uint(d)
	}
	for k := s.nearest; k != 0; k &= k - 1 {
		if d := nearestWeekday(bits.TrailingZeros32(k), n, first); d > 0 {
			dom |= 1 << uint(d)
		}
	}
	return dom
}

// dowSpecial returns the days that nL and n#k of the day-of-week field
// select in a month of n days whose first day is weekday first.
func (s *daySpec) dowSpecial(n, first int) uint32 {
	var dow uint32
	last := (first + n - 1) % 7
	for w := range 7 {
		if s.dowLast&(1<<uint(w)) != 0 {
			dow |= 1 << uint(n-(last-w+7)%7)
		}
		for k := s.dowNth[w]; k != 0; k &= k - 1 {
			if d := 1 + (w-first+7)%7 + 7*(bits.TrailingZeros8(k)-1); d <= n {
				dow |= 1 << uint(d)
			}
		}
	}
	return dow
}

// nearestWeekday returns the Monday-to-Friday day nearest to day k in a month
// of n days starting on weekday first, never leaving the month (Quartz's
// rule: 1W on a Saturday is Monday the 3rd), or 0 if the month has no day k.
func nearestWeekday(k, n, first int) int {
	if k > n {
		return 0
	}
	switch (first + k - 1) % 7 {
	case 6: // Saturday
		if k == 1 {
			return 3
		}
		return k - 1
	case 0: // Sunday
		if k == n {
			return k - 2
		}
		return k + 1
	}
	return k
}
