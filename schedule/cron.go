package schedule

// cronSpec is a parsed cron expression: one bit set per field.
type cronSpec struct {
	sec, min uint64 // bits 0..59
	hour     uint64 // bits 0..23
	month    uint64 // bits 1..12
	days     daySpec
	years    *yearSet // nil: every year
}

const (
	minYear = 1970
	maxYear = 2199
	// cycleYears is the length of the Gregorian cycle: after 400 years the
	// calendar repeats, so a schedule without a year field that has no match
	// within 400 years of an instant has none at all.
	cycleYears = 400
)

// next returns the earliest wall-clock time >= from that matches.
func (c *cronSpec) next(from clock) (clock, bool) {
	last := from.year + cycleYears
	if c.years != nil {
		last = maxYear
	}
	y, mo, d, h, mi, s := from.year, from.month, from.day, from.hour, from.min, from.sec
	for ; y <= last; y, mo, d, h, mi, s = y+1, 1, 1, 0, 0, 0 {
		if c.years != nil && !c.years.has(y) {
			continue
		}
		for ; ; mo, d, h, mi, s = mo+1, 1, 0, 0, 0 {
			m2, ok := nextBit(c.month, mo)
			if !ok {
				break
			}
			if m2 != mo {
				mo, d, h, mi, s = m2, 1, 0, 0, 0
			}
			days := uint64(c.days.in(y, mo))
			for ; ; d, h, mi, s = d+1, 0, 0, 0 {
				d2, ok := nextBit(days, d)
				if !ok {
					break
				}
				if d2 != d {
					d, h, mi, s = d2, 0, 0, 0
				}
				for ; ; h, mi, s = h+1, 0, 0 {
					h2, ok := nextBit(c.hour, h)
					if !ok {
						break
					}
					if h2 != h {
						h, mi, s = h2, 0, 0
					}
					for ; ; mi, s = mi+1, 0 {
						m2, ok := nextBit(c.min, mi)
						if !ok {
							break
						}
						if m2 != mi {
							mi, s = m2, 0
						}
						if s2, ok := nextBit(c.sec, s); ok {
							return clock{y, mo, d, h, mi, s2}, true
						}
					}
				}
			}
		}
	}
	return clock{}, false
}

// prev returns the latest wall-clock time <= from that matches.
func (c *cronSpec) prev(from clock) (clock, bool) {
	first := from.year - cycleYears
	if c.years != nil {
		first = minYear
	}
	y, mo, d, h, mi, s := from.year, from.month, from.day, from.hour, from.min, from.sec
	for ; y >= first; y, mo, d, h, mi, s = y-1, 12, 31, 23, 59, 59 {
		if c.years != nil && !c.years.has(y) {
			continue
		}
		for ; ; mo, d, h, mi, s = mo-1, 31, 23, 59, 59 {
			m2, ok := prevBit(c.month, mo)
			if !ok {
				break
			}
			if m2 != mo {
				mo, d, h, mi, s = m2, 31, 23, 59, 59
			}
			days := uint64(c.days.in(y, mo))
			for ; ; d, h, mi, s = d-1, 23, 59, 59 {
				d2, ok := prevBit(days, d)
				if !ok {
					break
				}
				if d2 != d {
					d, h, mi, s = d2, 23, 59, 59
				}
				for ; ; h, mi, s = h-1, 59, 59 {
					h2, ok := prevBit(c.hour, h)
					if !ok {
						break
					}
					if h2 != h {
						h, mi, s = h2, 59, 59
					}
					for ; ; mi, s = mi-1, 59 {
						m2, ok := prevBit(c.min, mi)
						if !ok {
							break
						}
						if m2 != mi {
							mi, s = m2, 59
						}
						if s2, ok := prevBit(c.sec, s); ok {
							return clock{y, mo, d, h, mi, s2}, true
						}
					}
				}
			}
		}
	}
	return clock{}, false
}
