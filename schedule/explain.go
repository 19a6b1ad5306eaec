package schedule

import (
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// Explain returns the schedule in plain English, for example
// "At 02:30 on Monday through Friday, America/New_York; if 02:30 does not
// exist it runs at 03:00". Hashed fields are shown with their values for
// the job id. DST clauses appear only where the zone's current rules can
// make a fire time fall into a gap or a repeated hour.
func (s *Schedule) Explain() string {
	switch s.kind {
	case Triggered:
		return "Never by itself; only when triggered"
	case Interval:
		return fmt.Sprintf("Every %s, measured from the end of the previous invocation", ShortDuration(s.interval)) + s.explainBounds()
	}
	if s.fields == nil {
		// Parse dropped them; the same expression and options give them
		// back, and cannot fail where they parsed before.
		full, err := parse(s.expr, Options{JobID: s.jobID, Location: s.loc, Gap: s.gap, Repeat: s.repeat})
		if err != nil {
			return s.expr
		}
		full.window, full.skip, full.only = s.window, s.skip, s.only
		s = full
	}
	var b strings.Builder
	b.WriteString(s.explainTime())
	for _, p := range []string{s.explainDays(), s.explainIn(fMonth), s.explainIn(fYear)} {
		if p != "" {
			b.WriteString(" " + p)
		}
	}
	if s.hashed() {
		fmt.Fprintf(&b, " (H values for job %s)", s.jobID)
	}
	b.WriteString(", " + s.loc.String())
	for _, c := range s.explainDST() {
		b.WriteString("; " + c)
	}
	b.WriteString(s.explainBounds())
	return b.String()
}

// explainBounds says which calendars and which window bound the
// occurrences: "; only on business-days; not on holidays; from ... until
// ...".
func (s *Schedule) explainBounds() string {
	var b strings.Builder
	names := func(cs []*Calendar) string {
		var ns []string
		for _, c := range cs {
			ns = append(ns, c.name)
		}
		return joinOr(ns)
	}
	if len(s.only) > 0 {
		b.WriteString("; only on days of " + names(s.only))
	}
	if len(s.skip) > 0 {
		b.WriteString("; not on days of " + names(s.skip))
	}
	const layout = "2006-01-02 15:04:05 MST"
	switch w := s.window; {
	case !w.From.IsZero() && !w.Until.IsZero():
		fmt.Fprintf(&b, "; active from %s until %s", w.From.In(s.loc).Format(layout), w.Until.In(s.loc).Format(layout))
	case !w.From.IsZero():
		fmt.Fprintf(&b, "; active from %s", w.From.In(s.loc).Format(layout))
	case !w.Until.IsZero():
		fmt.Fprintf(&b, "; active until %s", w.Until.In(s.loc).Format(layout))
	}
	return b.String()
}

func joinOr(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func (s *Schedule) field(k fieldKind) (field, bool) {
	for _, f := range s.fields {
		if f.kind == k {
			return f, true
		}
	}
	return field{kind: k, text: "0", items: []item{{op: opRange, step: 1}}}, false
}

func (s *Schedule) hashed() bool {
	for _, f := range s.fields {
		for _, it := range f.items {
			if it.hashed {
				return true
			}
		}
	}
	return false
}

// singles returns the values of a field made only of single values.
func singles(f field) ([]int, bool) {
	var vs []int
	for _, it := range f.items {
		if it.op != opRange || it.lo != it.hi {
			return nil, false
		}
		vs = append(vs, it.lo)
	}
	return vs, true
}

func isAll(f field) bool {
	return len(f.items) == 1 && f.items[0].star && f.items[0].step == 1
}

// everyPhrase describes "*", "*/n" and "H/n" over a whole field, the fields
// that say "every ..." rather than naming values.
func everyPhrase(f field, unit string) (string, bool) {
	if len(f.items) != 1 || f.items[0].op != opRange {
		return "", false
	}
	it, info := f.items[0], fieldInfo[f.kind]
	full := it.hi == info.hi || f.kind == fDow && it.hi == 6
	switch {
	case !full || !(it.star || it.hashed) && it.step == 1:
		return "", false
	case it.step == 1:
		return "every " + unit, true
	case it.lo == info.lo:
		return fmt.Sprintf("every %d %ss", it.step, unit), true
	}
	return fmt.Sprintf("every %d %ss from %s %d", it.step, unit, unit, it.lo), true
}

func (s *Schedule) explainTime() string {
	sec, _ := s.field(fSecond)
	min, _ := s.field(fMinute)
	hour, _ := s.field(fHour)
	secs, secOK := singles(sec)
	mins, minOK := singles(min)
	hours, hourOK := singles(hour)
	if secOK && minOK && hourOK && len(secs) == 1 && len(hours)*len(mins) <= 6 {
		var times []string
		for _, h := range hours {
			for _, m := range mins {
				times = append(times, clockText(h*3600+m*60+secs[0], secs[0] != 0))
			}
		}
		return "At " + joinAnd(times)
	}

	var parts []string
	finest := ""
	if !(secOK && len(secs) == 1 && secs[0] == 0) {
		parts, finest = append(parts, unitPhrase(sec, "second")), "second"
	}
	if !(finest != "" && isAll(min) && strings.HasPrefix(parts[0], "every")) {
		parts = append(parts, unitPhrase(min, "minute"))
	}
	if !(isAll(hour) && strings.HasPrefix(parts[len(parts)-1], "every")) {
		parts = append(parts, unitPhrase(hour, "hour"))
	}
	for i := 1; i < len(parts); i++ {
		parts[i] = "of " + strings.TrimPrefix(parts[i], "at ")
	}
	out := strings.Join(parts, " ")
	return strings.ToUpper(out[:1]) + out[1:]
}

// unitPhrase describes a second, minute or hour field: "every 15 minutes",
// "at minute 0", "at hours 9 through 17".
func unitPhrase(f field, unit string) string {
	if p, ok := everyPhrase(f, unit); ok {
		return p
	}
	vs, n := itemsText(f, unit, func(v int) string { return fmt.Sprint(v) })
	if n == 1 {
		return "at " + unit + " " + vs
	}
	return "at " + unit + "s " + vs
}

// itemsText joins the items of a field: "1, 15 and 20 through 25", and
// says how many values that names (2 or more counts as plural). Steps read
// "every 2nd <unit> from 1 through 15".
func itemsText(f field, unit string, name func(int) string) (string, int) {
	var parts []string
	n := 0
	for _, it := range f.items {
		switch {
		case it.lo == it.hi:
			parts, n = append(parts, name(it.lo)), n+1
		case it.step == 1:
			parts, n = append(parts, name(it.lo)+" through "+name(it.hi)), n+2
		case it.star:
			parts, n = append(parts, fmt.Sprintf("every %s %s", ordinal(it.step), unit)), n+2
		default:
			parts, n = append(parts, fmt.Sprintf("every %s %s from %s through %s", ordinal(it.step), unit, name(it.lo), name(it.hi))), n+2
		}
	}
	return joinAnd(parts), n
}

var weekdayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

func (s *Schedule) explainDays() string {
	dom, _ := s.field(fDom)
	dow, _ := s.field(fDow)
	var domText, dowText string
	if !isAll(dom) && dom.text != "?" {
		var parts []string
		for _, it := range dom.items {
			switch it.op {
			case opLastDay:
				if it.n == 0 {
					parts = append(parts, "the last day")
				} else {
					parts = append(parts, fmt.Sprintf("%d %s before the last day", it.n, plural(it.n, "day")))
				}
			case opLastWeekday:
				parts = append(parts, "the last weekday")
			case opNearest:
				parts = append(parts, fmt.Sprintf("the weekday nearest day %d", it.n))
			default:
				text, n := itemsText(field{kind: fDom, items: []item{it}}, "day", func(v int) string { return fmt.Sprint(v) })
				if it.step == 1 {
					text = plural(n, "day") + " " + text
				}
				parts = append(parts, text)
			}
		}
		domText = joinAnd(parts) + " of the month"
	}
	if !isAll(dow) && dow.text != "?" {
		var parts []string
		for _, it := range dow.items {
			switch it.op {
			case opLastDow:
				parts = append(parts, "the last "+weekdayNames[it.lo]+" of the month")
			case opNth:
				parts = append(parts, "the "+nthWords[it.n]+" "+weekdayNames[it.lo]+" of the month")
			default:
				text, _ := itemsText(field{kind: fDow, items: []item{it}}, "day of the week", func(v int) string { return weekdayNames[v%7] })
				parts = append(parts, text)
			}
		}
		dowText = joinAnd(parts)
	}
	switch {
	case domText == "" && dowText == "":
		return ""
	case dowText == "":
		return "on " + domText
	case domText == "":
		return "on " + dowText
	case s.cron.days.or:
		return "on " + domText + " or on " + dowText
	}
	return "on " + domText + ", if it is " + dowText
}

var nthWords = [...]string{"", "first", "second", "third", "fourth", "fifth"}

var monthNames = [...]string{"", "January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

func (s *Schedule) explainIn(k fieldKind) string {
	f, ok := s.field(k)
	if !ok || isAll(f) {
		return ""
	}
	if k == fMonth {
		text, _ := itemsText(f, "month", func(v int) string { return monthNames[v] })
		return "in " + text
	}
	text, n := itemsText(f, "year", func(v int) string { return fmt.Sprint(v) })
	if n == 1 {
		return "in " + text
	}
	return "in years " + text
}

// explainDST says what the DST policy does to this schedule under the zone's
// current rules: those the time zone database projects indefinitely, read
// off the year 2100 so the answer does not depend on today's date.
func (s *Schedule) explainDST() []string {
	gap, overlap := zoneRule(s.loc)
	var clauses []string
	if in := s.timesOfDay(gap); len(in) > 0 {
		switch {
		case len(in) == 1 && s.gap == GapShift:
			clauses = append(clauses, fmt.Sprintf("if %s does not exist it runs at %s", s.clock(in[0]), s.clock(gap.end)))
		case len(in) == 1:
			clauses = append(clauses, fmt.Sprintf("if %s does not exist it is skipped", s.clock(in[0])))
		case s.gap == GapShift:
			clauses = append(clauses, fmt.Sprintf("on the day clocks spring forward, times from %s to %s run once at %s",
				s.clock(gap.start), s.clock(gap.end), s.clock(gap.end)))
		default:
			clauses = append(clauses, fmt.Sprintf("on the day clocks spring forward, times from %s to %s are skipped",
				s.clock(gap.start), s.clock(gap.end)))
		}
	}
	if in := s.timesOfDay(overlap); len(in) > 0 {
		which := map[Repeat]string{RepeatFirst: "the first time", RepeatLast: "the second time", RepeatBoth: "both times"}[s.repeat]
		switch {
		case len(in) == 1 && s.daily():
			clauses = append(clauses, "if it happens twice it runs "+which)
		case len(in) == 1:
			clauses = append(clauses, fmt.Sprintf("if %s happens twice it runs %s", s.clock(in[0]), which))
		default:
			clauses = append(clauses, fmt.Sprintf("on the day clocks fall back, times from %s to %s run %s",
				s.clock(overlap.start), s.clock(overlap.end), which))
		}
	}
	return clauses
}

// daily reports whether the schedule fires at one time of day.
func (s *Schedule) daily() bool {
	return bits.OnesCount64(s.cron.sec) == 1 && bits.OnesCount64(s.cron.min) == 1 && bits.OnesCount64(s.cron.hour) == 1
}

// todSpan is a span of wall-clock times of day, in seconds: [start, end).
type todSpan struct{ start, end int }

// zoneRule returns the spring-forward gap and the fall-back repeat of the
// zone's current rules, empty when it has no DST.
func zoneRule(loc *time.Location) (gap, overlap todSpan) {
	u := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for end := u + 366*86400; u < end; {
		p := periodAt(loc, u)
		if !p.bounded.end {
			break
		}
		lo, hi := p.end+p.off, p.end+p.nextOff
		if hi > lo {
			gap = todSpan{int(lo % 86400), int(lo%86400 + hi - lo)}
		} else {
			overlap = todSpan{int(hi % 86400), int(hi%86400 + lo - hi)}
		}
		u = p.end
	}
	return gap, overlap
}

// timesOfDay returns the schedule's fire times of day inside span.
func (s *Schedule) timesOfDay(span todSpan) []int {
	var in []int
	for t := span.start; t < span.end; t++ {
		tod := t % 86400
		if s.cron.hour&(1<<uint(tod/3600)) != 0 && s.cron.min&(1<<uint(tod/60%60)) != 0 && s.cron.sec&(1<<uint(tod%60)) != 0 {
			in = append(in, tod)
		}
	}
	return in
}

// clock formats a time of day, with seconds if the schedule has any.
func (s *Schedule) clock(tod int) string { return clockText(tod%86400, s.cron.sec != 1) }

func clockText(tod int, withSeconds bool) string {
	if withSeconds {
		return fmt.Sprintf("%02d:%02d:%02d", tod/3600, tod/60%60, tod%60)
	}
	return fmt.Sprintf("%02d:%02d", tod/3600, tod/60%60)
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// ShortDuration writes a duration as a config or a person does, without
// the zero units time.Duration prints: 10m rather than 10m0s, 1h30m.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
