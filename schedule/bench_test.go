package schedule_test

// Benchmarks of this package against the two cron libraries Go users would
// otherwise pick, github.com/robfig/cron/v3 and github.com/gorhill/cronexpr.
// docs/benchmarks.md records the figures and how to read them.
//
// Every library parses the same schedules and walks the same chain of fire
// times: t = Next(t) from one fixed instant, back to that instant when the
// chain reaches its end. TestLibrariesAgree checks that the chains are equal
// wherever the libraries mean the same thing, so the benchmarks time equal
// work.

import (
	"fmt"
	"testing"
	"time"

	"github.com/gorhill/cronexpr"
	"github.com/robfig/cron/v3"

	"github.com/sundial-cron/sundial/schedule"
)

// benchExpr is one schedule, written for each library.
type benchExpr struct {
	name string
	expr string // as sundial and robfig read it
	// seconds says the expression has a seconds field: robfig needs a parser
	// that expects one, and cronexpr reads six fields as minute..year, so it
	// gets seven (a year field of *).
	seconds bool
	// years is how long the benchmark chain runs before it starts over; 0
	// means one year, which holds both DST transitions of New York.
	years int
	// robfigCannot and cronexprCannot say why the library cannot parse the
	// expression; its sub-benchmarks are skipped with that reason.
	robfigCannot, cronexprCannot string
}

var (
	standardExprs = []benchExpr{
		{name: "every-minute", expr: "* * * * *"},
		{name: "every-15-minutes", expr: "*/15 * * * *"},
		{name: "hourly", expr: "0 * * * *"},
		{name: "daily-0230", expr: "30 2 * * *"},
		{name: "workday-hours", expr: "0 9-17 * * 1-5"},
		{name: "monthly", expr: "0 0 1 * *"},
		{name: "1st-and-15th", expr: "0 0 1,15 * *"},
		{name: "seconds-field", expr: "30 * * * * *", seconds: true},
	}
	// Expressions that only some of the libraries parse: robfig/cron has no
	// L or #, cronexpr has both.
	specialExprs = []benchExpr{
		{name: "last-day-of-month", expr: "0 0 L * *",
			robfigCannot: "robfig/cron has no L (last day of the month)"},
		{name: "last-friday", expr: "0 0 * * 5L",
			robfigCannot: "robfig/cron has no nL (last weekday n of the month)"},
		// It fires in 2044 and 2072; cronexpr knows no year after 2099.
		{name: "fifth-monday-of-february", expr: "0 0 * 2 MON#5", years: 70,
			robfigCannot: "robfig/cron has no # (n-th weekday of the month)"},
	}
)

// benchCase is an expression in a time zone.
type benchCase struct {
	benchExpr
	name string // expression name @ zone
	loc  *time.Location
}

func benchCases(tb testing.TB) []benchCase {
	tb.Helper()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		tb.Fatal(err)
	}
	var cases []benchCase
	for _, loc := range []*time.Location{time.UTC, ny} {
		for _, e := range standardExprs {
			cases = append(cases, benchCase{e, e.name + "@" + zoneName(loc), loc})
		}
	}
	for _, e := range specialExprs {
		cases = append(cases, benchCase{e, e.name + "@UTC", time.UTC})
	}
	return cases
}

func zoneName(loc *time.Location) string {
	if loc == time.UTC {
		return "UTC"
	}
	return "NY"
}

// cronexprText is the expression in cronexpr's syntax.
func (c benchCase) cronexprText() string {
	if c.seconds {
		return c.expr + " *"
	}
	return c.expr
}

// The chain every Next benchmark walks starts at chainStart, in the case's
// zone, and starts over when a fire time is not before chainEnd, or is not
// after the one before it (cronexpr steps back in time at a spring forward,
// see sundialAs), or there is none.
func (c benchCase) chainStart() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, c.loc) }
func (c benchCase) chainEnd() time.Time   { return c.chainStart().AddDate(max(c.years, 1), 0, 0) }

// The zone is loaded once, outside the timed loops, for every library: a
// CRON_TZ= prefix would make each Parse read the zone file, and that would
// hide the parsing. robfig takes the zone as the Location of the schedule
// it returns; cronexpr has no zones and works in the location of the time it
// is given.

func parseSundial(c benchCase, opts schedule.Options) (*schedule.Schedule, error) {
	opts.Location = c.loc
	return schedule.Parse(c.expr, opts)
}

func robfigParser(seconds bool) cron.Parser {
	if seconds {
		return cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	}
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

func parseRobfig(p cron.Parser, c benchCase) (cron.Schedule, error) {
	s, err := p.Parse(c.expr)
	if err != nil {
		return nil, err
	}
	s.(*cron.SpecSchedule).Location = c.loc
	return s, nil
}

func BenchmarkParse(b *testing.B) {
	for _, c := range benchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			b.Run("sundial", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := parseSundial(c, schedule.Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("robfig", func(b *testing.B) {
				if c.robfigCannot != "" {
					b.Skip(c.robfigCannot)
				}
				p := robfigParser(c.seconds)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := parseRobfig(p, c); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("cronexpr", func(b *testing.B) {
				if c.cronexprCannot != "" {
					b.Skip(c.cronexprCannot)
				}
				text := c.cronexprText()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := cronexpr.Parse(text); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// The timed loops call each library directly rather than through nextFunc,
// so that no indirection is timed; the setup first checks the library
// against sundial on the start of the chain.
func BenchmarkNext(b *testing.B) {
	for _, c := range benchCases(b) {
		start, end := c.chainStart(), c.chainEnd()
		b.Run(c.name, func(b *testing.B) {
			b.Run("sundial", func(b *testing.B) {
				s, err := parseSundial(c, schedule.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				t := start
				for b.Loop() {
					prev := t
					if t, _ = s.Next(t); !t.After(prev) || !t.Before(end) {
						t = start
					}
				}
			})
			b.Run("robfig", func(b *testing.B) {
				if c.robfigCannot != "" {
					b.Skip(c.robfigCannot)
				}
				checkAgainstSundial(b, c, "robfig", 100)
				s, err := parseRobfig(robfigParser(c.seconds), c)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				t := start
				for b.Loop() {
					prev := t
					if t = s.Next(t); !t.After(prev) || !t.Before(end) {
						t = start
					}
				}
			})
			b.Run("cronexpr", func(b *testing.B) {
				if c.cronexprCannot != "" {
					b.Skip(c.cronexprCannot)
				}
				checkAgainstSundial(b, c, "cronexpr", 100)
				e, err := cronexpr.Parse(c.cronexprText())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				t := start
				for b.Loop() {
					prev := t
					if t = e.Next(t); !t.After(prev) || !t.Before(end) {
						t = start
					}
				}
			})
		})
	}
}

// BenchmarkBetween lists a year of fire times of an every-five-minutes
// schedule: sundial with Between, the others with the loop over Next their
// users would write. In New York, too, the year has 365*288 of them: the
// hour skipped in March and the hour repeated in November cancel out.
// cronexpr cannot get past New York's spring forward (see sundialAs), so it
// runs in UTC only.
func BenchmarkBetween(b *testing.B) {
	const expr = "*/5 * * * *"
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	for _, loc := range []*time.Location{time.UTC, ny} {
		c := benchCase{benchExpr{expr: expr}, "year-every-5-minutes@" + zoneName(loc), loc}
		from, to := c.chainStart(), c.chainEnd()
		const want = 365 * 24 * 12
		check := func(b *testing.B, n int) {
			if n != want {
				b.Fatalf("listed %d fire times, want %d", n, want)
			}
		}
		b.Run(c.name, func(b *testing.B) {
			b.Run("sundial", func(b *testing.B) {
				s, err := parseSundial(c, schedule.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					n := 0
					for range s.Between(from, to) {
						n++
					}
					check(b, n)
				}
			})
			b.Run("robfig", func(b *testing.B) {
				s, err := parseRobfig(robfigParser(false), c)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					n := 0
					for t := s.Next(from.Add(-time.Second)); t.Before(to); t = s.Next(t) {
						n++
					}
					check(b, n)
				}
			})
			b.Run("cronexpr", func(b *testing.B) {
				if loc != time.UTC {
					b.Skip("cronexpr steps back in time at New York's spring forward and never gets past it")
				}
				e, err := cronexpr.Parse(expr)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					n := 0
					for t := e.Next(from.Add(-time.Second)); !t.IsZero() && t.Before(to); t = e.Next(t) {
						n++
					}
					check(b, n)
				}
			})
		})
	}
}

// nextFunc returns the Next of library lib for case c with one signature:
// the fire time after t, or the zero time if there is none.
func nextFunc(c benchCase, lib string) (func(time.Time) time.Time, error) {
	switch lib {
	case "robfig":
		s, err := parseRobfig(robfigParser(c.seconds), c)
		if err != nil {
			return nil, err
		}
		return s.Next, nil
	case "cronexpr":
		e, err := cronexpr.Parse(c.cronexprText())
		if err != nil {
			return nil, err
		}
		return e.Next, nil
	}
	panic("unknown library " + lib)
}

// sundialAs returns the Next of the sundial schedule that means what
// library lib means by case c, and the end of the stretch of the chain on
// which the two are comparable.
//
// robfig/cron walks real time through DST transitions: it skips wall-clock
// times that do not exist and fires twice at those that happen twice. That
// is sundial's GapSkip and RepeatBoth, the default only for schedules whose
// hour field is * or a step; a daily 02:30 in New York fires at 03:00 on the
// day of the spring forward by default, and robfig does not fire that day.
//
// cronexpr has no DST rule: at a spring forward it steps back in time (from
// 01:59 EST it returns 01:00 EST) and a chain never gets past it, so it is
// comparable only up to the zone's first transition.
func sundialAs(c benchCase, lib string) (func(time.Time) time.Time, time.Time, error) {
	var opts schedule.Options
	end := c.chainEnd()
	switch lib {
	case "robfig":
		opts = schedule.Options{Gap: schedule.GapSkip, Repeat: schedule.RepeatBoth}
	case "cronexpr":
		// On the day of the spring forward cronexpr also fires at wall-clock
		// times before the transition that do not match (01:30 for 02:30).
		if _, tr := c.chainStart().ZoneBounds(); !tr.IsZero() && tr.Before(end) {
			end = time.Date(tr.Year(), tr.Month(), tr.Day(), 0, 0, 0, 0, c.loc)
		}
	}
	s, err := parseSundial(c, opts)
	if err != nil {
		return nil, time.Time{}, err
	}
	next := func(t time.Time) time.Time {
		t, _ = s.Next(t)
		return t
	}
	return next, end, nil
}

// chain returns the first n fire times of a chain from instant from, before
// end; it stops early where the chain steps back in time.
func chain(next func(time.Time) time.Time, from, end time.Time, n int) []time.Time {
	var out []time.Time
	prev := from
	for t := next(prev); t.After(prev) && t.Before(end) && len(out) < n; t = next(t) {
		out = append(out, t)
		prev = t
	}
	return out
}

// compareWithSundial returns the first difference between library lib and
// sundial under the same rules, or "". It compares n fire times from the
// start of the chain of c and n from a day before each change of UTC offset
// on the way, where the libraries are most likely to part.
func compareWithSundial(c benchCase, lib string, n int) (string, error) {
	next, err := nextFunc(c, lib)
	if err != nil {
		return "", err
	}
	want, end, err := sundialAs(c, lib)
	if err != nil {
		return "", err
	}
	from := []time.Time{c.chainStart()}
	for t := c.chainStart(); ; {
		_, change := t.ZoneBounds()
		if change.IsZero() || !change.Before(end) {
			break
		}
		from = append(from, change.Add(-24*time.Hour))
		t = change
	}
	for _, f := range from {
		if d := firstDifference(chain(next, f, end, n), chain(want, f, end, n), c.loc); d != "" {
			return fmt.Sprintf("from %s: %s", f, d), nil
		}
	}
	return "", nil
}

func firstDifference(got, want []time.Time, loc *time.Location) string {
	for i := range min(len(got), len(want)) {
		if !got[i].Equal(want[i]) {
			return fmt.Sprintf("fire time %d is %s, sundial says %s", i, got[i].In(loc), want[i].In(loc))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d fire times, sundial has %d", len(got), len(want))
	}
	return ""
}

// checkAgainstSundial fails the benchmark if library lib disagrees with
// sundial (see compareWithSundial).
func checkAgainstSundial(b *testing.B, c benchCase, lib string, n int) {
	b.Helper()
	d, err := compareWithSundial(c, lib, n)
	if err != nil {
		b.Fatal(err)
	}
	if d != "" {
		b.Fatalf("%s and sundial disagree on %q: %s", lib, c.expr, d)
	}
}

// TestLibrariesAgree compares each library with sundial on the benchmark
// chains, for every case the library can parse: where they mean the same,
// they must give the same fire times.
func TestLibrariesAgree(t *testing.T) {
	t.Parallel()
	n := 2000 // two days of every-minute fire times around each DST change
	if testing.Short() {
		n = 200
	}
	for _, c := range benchCases(t) {
		for _, lib := range []string{"robfig", "cronexpr"} {
			if lib == "robfig" && c.robfigCannot != "" || lib == "cronexpr" && c.cronexprCannot != "" {
				continue
			}
			t.Run(c.name+"/"+lib, func(t *testing.T) {
				t.Parallel()
				d, err := compareWithSundial(c, lib, n)
				if err != nil {
					t.Fatalf("%s cannot parse %q: %v", lib, c.expr, err)
				}
				if d != "" {
					t.Error(d)
				}
			})
		}
	}
}
