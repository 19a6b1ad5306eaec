package schedule

// Calendar arithmetic on the proleptic Gregorian calendar, in plain integers.
// The fire-time search works on local wall-clock fields and converts to an
// instant once per result, so it never pays for time.Date normalisation.

// clock is a local wall-clock time with second resolution.
type clock struct {
	year, month, day, hour, min, sec int
}

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d.
// Howard Hinnant's algorithm: exact for every Gregorian date, no loops.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := int(z - era*146097)
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + int(era)*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// weekdayOfDays returns the weekday (0 = Sunday) of a day counted from 1970-01-01, a Thursday.
func weekdayOfDays(days int64) int {
	w := (days + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func monthLen(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// seconds returns the wall-clock time as seconds since 1970-01-01T00:00:00 on
// the same wall clock; subtracting the UTC offset turns it into a Unix time.
func (c clock) seconds() int64 {
	return daysFromCivil(c.year, c.month, c.day)*86400 + int64(c.hour*3600+c.min*60+c.sec)
}

func clockOf(secs int64) clock {
	days := secs / 86400
	rem := secs % 86400
	if rem < 0 {
		rem += 86400
		days--
	}
	y, m, d := civilFromDays(days)
	r := int(rem)
	return clock{y, m, d, r / 3600, r / 60 % 60, r % 60}
}
