package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Error is a schedule that cannot be parsed. Field is the 1-based position
// of the offending cron field as written, or 0 when the error is about the
// expression as a whole.
type Error struct {
	Field int
	Name  string // the field's name, e.g. "day of month"
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == 0 {
		return e.Msg
	}
	return fmt.Sprintf("field %d (%s): %s", e.Field, e.Name, e.Msg)
}

// fieldKind and itemOp are bytes so that fields and items, which every
// schedule keeps for Explain, pack small: Parse's cost is mostly memory.
type fieldKind uint8

const (
	fSecond fieldKind = iota
	fMinute
	fHour
	fDom
	fMonth
	fDow
	fYear
)

var fieldInfo = [...]struct {
	name   string
	lo, hi int
	names  []string // value names, index = value
}{
	fSecond: {name: "second", lo: 0, hi: 59},
	fMinute: {name: "minute", lo: 0, hi: 59},
	fHour:   {name: "hour", lo: 0, hi: 23},
	fDom:    {name: "day of month", lo: 1, hi: 31},
	fMonth: {name: "month", lo: 1, hi: 12, names: []string{"", "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
		"JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	fDow:  {name: "day of week", lo: 0, hi: 7, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
	fYear: {name: "year", lo: minYear, hi: maxYear},
}

// field is one parsed cron field, kept for Explain.
type field struct {
	text  string
	items []item
	kind  fieldKind
	pos   uint8 // 1-based, as written
}

type itemOp uint8

const (
	opRange       itemOp = iota // lo-hi/step; a single value is lo == hi
	opLastDay                   // L-n
	opLastWeekday               // LW
	opNearest                   // nW
	opLastDow                   // nL: the last weekday n of the month
	opNth                       // lo#n: the n-th weekday lo of the month
)

type item struct {
	lo, hi, step int
	n            int
	op           itemOp
	star         bool // written as * (or ?)
	hashed       bool // written with H
}

var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// Parse parses a schedule expression:
//
//   - cron with 5 fields (minute hour day-of-month month day-of-week), 6 fields
//     (seconds first) or 7 fields (year last, 1970-2199);
//   - a macro: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly;
//   - an interval: "@every 90s" or "with 10m interval";
//   - "triggered", which never fires by itself;
//
// optionally prefixed by "CRON_TZ=Zone " or "TZ=Zone ". An expression that
// can never fire is an error.
func Parse(expr string, opts Options) (*Schedule, error) {
	s, err := parse(expr, opts)
	if err != nil {
		return nil, err
	}
	if err := s.bound(opts); err != nil {
		return nil, err
	}
	// A server holds a parsed schedule per job, and the fields were most
	// of its size; only Explain reads them, and it parses again.
	s.fields = nil
	return s, nil
}

// parse is Parse, keeping the cron fields.
func parse(expr string, opts Options) (*Schedule, error) {
	s := &Schedule{expr: expr, loc: time.UTC, jobID: opts.JobID}
	if opts.Location != nil {
		if opts.Location.String() == "Local" {
			return nil, &Error{Msg: localZoneMsg}
		}
		s.loc = opts.Location
	}
	text := strings.TrimSpace(expr)
	for _, prefix := range []string{"CRON_TZ=", "TZ="} {
		if !strings.HasPrefix(text, prefix) {
			continue
		}
		name, rest, _ := strings.Cut(text[len(prefix):], " ")
		if name == "" {
			// LoadZone reads "" as UTC; written out, it is a zone left out.
			return nil, &Error{Msg: prefix + " needs a time zone name, e.g. " + prefix + "Europe/Paris"}
		}
		loc, err := LoadZone(name)
		if err != nil {
			return nil, &Error{Msg: prefix + name + ": " + err.Error()}
		}
		if opts.Location != nil && opts.Location.String() != loc.String() {
			return nil, &Error{Msg: fmt.Sprintf("time zone given twice: %s%s in the schedule and %s", prefix, name, opts.Location)}
		}
		s.loc = loc
		text = strings.TrimSpace(rest)
		if text == "" {
			return nil, &Error{Msg: "missing schedule after " + prefix + name}
		}
		if strings.HasPrefix(text, "CRON_TZ=") || strings.HasPrefix(text, "TZ=") {
			second, _, _ := strings.Cut(text, " ")
			return nil, &Error{Msg: fmt.Sprintf("time zone given twice: %s%s and %s", prefix, name, second)}
		}
		break
	}

	var buf [7]string
	words := splitWords(text, &buf)
	switch {
	case text == "":
		return nil, &Error{Msg: "empty schedule"}
	case text == "triggered":
		s.kind = Triggered
		return s, nil
	case strings.EqualFold(words[0], "@every") || words[0] == "with":
		if err := s.parseInterval(words); err != nil {
			return nil, err
		}
		return s, nil
	case strings.HasPrefix(text, "@"):
		m, ok := macros[strings.ToLower(words[0])]
		switch {
		case !ok:
			return nil, &Error{Msg: fmt.Sprintf("unknown macro %q; expected @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>", text)}
		case len(words) > 1:
			return nil, &Error{Msg: fmt.Sprintf("%s is a whole schedule; nothing may follow it, got %q", words[0], text)}
		}
		words = splitWords(m, &buf)
	}
	if err := s.parseCron(words); err != nil {
		return nil, err
	}
	s.resolvePolicy(opts)
	return s, nil
}

// bound applies the active window and the calendars of opts, which only
// fixed fire times can have: an interval is measured from the end of the
// previous run, so it may have a window but no calendars, and a triggered
// schedule has neither.
func (s *Schedule) bound(opts Options) error {
	w := opts.Active
	switch {
	case s.kind == Triggered && !w.IsZero():
		return &Error{Msg: "a triggered schedule has no fire times for an active window to bound"}
	case s.kind != Cron && len(opts.Skip)+len(opts.Only) > 0:
		return &Error{Msg: fmt.Sprintf("calendars apply to the fire times of a cron schedule; %s has none (an interval counts from the end of the previous run): write it as cron, e.g. \"*/10 * * * *\"", s.kind)}
	case !w.From.IsZero() && !w.Until.IsZero() && w.Until.Before(w.From):
		return &Error{Msg: fmt.Sprintf("the active window ends (%s) before it starts (%s)", w.Until.Format(time.RFC3339), w.From.Format(time.RFC3339))}
	}
	s.window, s.skip, s.only = w, opts.Skip, opts.Only
	return nil
}

// splitWords splits text at white space, as strings.Fields does, into buf
// when the words fit. A schedule has at most seven and Parse runs for every
// job of every config revision, so they are not worth an allocation.
func splitWords(text string, buf *[7]string) []string {
	words := buf[:0]
	for w := range strings.FieldsSeq(text) {
		words = append(words, w)
	}
	return words
}

const localZoneMsg = `time zone "Local" depends on the machine; name an IANA zone such as Europe/Paris`

// LoadZone loads an IANA time zone by name; "" is UTC. "Local" is refused:
// a schedule must mean the same on every machine.
func LoadZone(name string) (*time.Location, error) {
	switch name {
	case "":
		return time.UTC, nil
	case "Local":
		return nil, fmt.Errorf("%s", localZoneMsg)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return loc, nil
}

func (s *Schedule) parseInterval(words []string) error {
	var d string
	switch {
	case strings.EqualFold(words[0], "@every") && len(words) == 2:
		d = words[1]
	case words[0] == "with" && len(words) == 3 && words[2] == "interval":
		d = words[1]
	default:
		return &Error{Msg: fmt.Sprintf("%q: expected \"@every <duration>\" or \"with <duration> interval\"", strings.Join(words, " "))}
	}
	iv, err := time.ParseDuration(d)
	switch {
	case err != nil:
		return &Error{Msg: fmt.Sprintf("interval %q is not a duration such as 90s, 10m or 1h30m", d)}
	case iv < time.Second:
		return &Error{Msg: fmt.Sprintf("interval %s is shorter than 1s", d)}
	case iv%time.Second != 0:
		return &Error{Msg: fmt.Sprintf("interval %s is not a whole number of seconds", d)}
	}
	s.kind, s.interval = Interval, iv
	return nil
}

func (s *Schedule) parseCron(words []string) error {
	var kinds []fieldKind
	switch len(words) {
	case 5:
		kinds = []fieldKind{fMinute, fHour, fDom, fMonth, fDow}
	case 6:
		kinds = []fieldKind{fSecond, fMinute, fHour, fDom, fMonth, fDow}
	case 7:
		kinds = []fieldKind{fSecond, fMinute, fHour, fDom, fMonth, fDow, fYear}
	default:
		return &Error{Msg: fmt.Sprintf("expected 5 fields (minute hour day-of-month month day-of-week), 6 (seconds first) or 7 (year last), got %d", len(words))}
	}
	c := &s.cron
	c.sec = 1 // five fields fire at second 0
	// The items of all fields share one array, sized by counting commas, so
	// that parsing costs a few allocations instead of a few per field: a
	// config import parses every job of every project.
	var counts [7]int
	n := 0
	for i, w := range words {
		if w != "*" { // see parseField
			counts[i] = strings.Count(w, ",") + 1
			n += counts[i]
		}
	}
	items := make([]item, n)
	s.fields = make([]field, len(words))
	for i, w := range words {
		// f is filled in on the stack and stored once complete, which is
		// cheaper than writing it piecemeal into the heap.
		f := field{kind: kinds[i], pos: uint8(i + 1), text: w, items: items[:0:counts[i]]}
		items = items[counts[i]:]
		if err := s.parseField(&f); err != nil {
			return err
		}
		s.fields[i] = f
	}
	c.days.finish()
	return s.checkFires()
}

// starItems[k] is the one item of a field of kind k written "*", made by
// parseItem itself. Most fields are *, and Parse's cost is mostly the memory
// it allocates, so they all share these; nothing writes to the items of a
// parsed field.
var starItems = func() (items [fYear + 1][1]item) {
	for k := range items {
		items[k][0], _ = new(Schedule).parseItem(fieldKind(k), "*")
	}
	return items
}()

func (s *Schedule) parseField(f *field) error {
	info := &fieldInfo[f.kind]
	if f.text == "*" {
		f.items = starItems[f.kind][:]
	} else {
		for tok := range strings.SplitSeq(f.text, ",") {
			it, err := s.parseItem(f.kind, tok)
			if err != nil {
				return &Error{Field: int(f.pos), Name: info.name, Msg: err.Error()}
			}
			f.items = append(f.items, it)
		}
	}
	c := &s.cron
	var set uint64
	for _, it := range f.items {
		switch it.op {
		case opRange:
			if f.kind != fYear {
				set |= span(it.lo, it.hi, it.step)
			}
		case opLastDay:
			c.days.domLast |= 1 << uint(it.n)
		case opLastWeekday:
			c.days.lastWDay = true
		case opNearest:
			c.days.nearest |= 1 << uint(it.n)
		case opLastDow:
			c.days.dowLast |= 1 << uint(it.lo)
		case opNth:
			c.days.dowNth[it.lo] |= 1 << uint(it.n)
		}
	}
	star := strings.HasPrefix(f.text, "*") || f.text == "?"
	switch f.kind {
	case fSecond:
		c.sec = set
	case fMinute:
		c.min = set
	case fHour:
		c.hour = set
	case fDom:
		c.days.dom = uint32(set)
		c.days.or = !star
	case fMonth:
		c.month = set
	case fDow:
		if set&(1<<7) != 0 {
			set = set&^(1<<7) | 1 // 7 is Sunday too
		}
		c.days.dow = uint8(set)
		c.days.or = c.days.or && !star
	case fYear:
		// Only a bare * is every year: */n and lists starting with *
		// still name particular years.
		if f.text != "*" {
			c.years = new(yearSet)
			for _, it := range f.items {
				for y := it.lo; y <= it.hi; y += it.step {
					c.years.add(y)
				}
			}
		}
	}
	return nil
}

// checkFires refuses a schedule that has no date at all, such as "0 0 30 2 *".
// Whether a month has a matching day depends only on its length and first
// weekday, and every such shape recurs in the 400-year Gregorian cycle, so
// the check is exact without searching.
func (s *Schedule) checkFires() error {
	c := &s.cron
	for m := 1; m <= 12; m++ {
		if c.month&(1<<uint(m)) == 0 {
			continue
		}
		if c.years == nil {
			if c.days.occursInMonth(m) {
				return nil
			}
			continue
		}
		for y := minYear; y <= maxYear; y++ {
			if c.years.has(y) && c.days.occurs(y, m) {
				return nil
			}
		}
	}
	// Say it in the order it reads: the days (either or both, as the
	// fields combine), then the months and years they are looked for in.
	var days, in []string
	for _, f := range s.fields {
		if f.text == "*" || f.text == "?" {
			continue
		}
		switch f.kind {
		case fDom, fDow:
			days = append(days, fmt.Sprintf("%s %q", fieldInfo[f.kind].name, f.text))
		case fMonth, fYear:
			in = append(in, fmt.Sprintf("in %s %q", fieldInfo[f.kind].name, f.text))
		}
	}
	join := " and "
	if c.days.or {
		join = " or "
	}
	if len(days) > 0 {
		in = append([]string{strings.Join(days, join)}, in...)
	}
	return &Error{Msg: "the schedule never fires: no date has " + strings.Join(in, " ")}
}

// resolvePolicy fills in the default DST policy. Schedules whose hour field
// is * or a step fire at least every few hours: like Vixie cron, they follow
// real time through transitions (skip the gap, fire in both repeated hours).
// Others are a fixed time of day that users expect once a day: shifted out
// of a gap, fired the first time a repeated time comes.
func (s *Schedule) resolvePolicy(opts Options) {
	hourly := false
	for _, f := range s.fields {
		if f.kind == fHour {
			hourly = f.text == "*" || strings.Contains(f.text, "/")
		}
	}
	s.gap, s.repeat = opts.Gap, opts.Repeat
	if s.gap == GapDefault {
		s.gap = GapShift
		if hourly {
			s.gap = GapSkip
		}
	}
	if s.repeat == RepeatDefault {
		s.repeat = RepeatFirst
		if hourly {
			s.repeat = RepeatBoth
		}
	}
}
