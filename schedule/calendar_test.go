package schedule_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

func mustCalendar(t *testing.T, name string, loc *time.Location, weekdays []time.Weekday, dates ...string) *schedule.Calendar {
	t.Helper()
	var ranges []schedule.DateRange
	for i := 0; i < len(dates); i += 2 {
		first, err := schedule.ParseDate(dates[i])
		if err != nil {
			t.Fatal(err)
		}
		last, err := schedule.ParseDate(dates[i+1])
		if err != nil {
			t.Fatal(err)
		}
		ranges = append(ranges, schedule.DateRange{First: first, Last: last})
	}
	c, err := schedule.NewCalendar(name, loc, weekdays, ranges)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}

// A calendar merges its ranges however they are written, and says what it
// holds in words.
func TestCalendarMergesRanges(t *testing.T) {
	t.Parallel()
	c := mustCalendar(t, "holidays", nil, nil, "2026-12-31", "2027-01-01", "2026-12-24", "2026-12-26", "2026-12-25", "2026-12-25", "2026-12-27", "2026-12-27")
	want := []string{"2026-12-24..2026-12-27", "2026-12-31..2027-01-01"}
	var got []string
	for _, r := range c.Ranges() {
		got = append(got, r.First.String()+".."+r.Last.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("Ranges() = %v, want %v", got, want)
	}
	if got, want := c.String(), "holidays (6 dates from 2026-12-24 to 2027-01-01)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	b := mustCalendar(t, "business-days", nil, weekdays)
	if got, want := b.String(), "business-days (Monday through Friday)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if _, err := schedule.NewCalendar("x", nil, nil, []schedule.DateRange{{First: schedule.Date{Year: 2026, Month: 2, Day: 2}, Last: schedule.Date{Year: 2026, Month: 2, Day: 1}}}); err == nil {
		t.Error("NewCalendar took a range that ends before it starts")
	}
}

// A holiday on the calendar's own wall clock removes the fire times whose
// date there is the holiday, though the job's wall clock says another day.
func TestCalendarDateIsTheCalendarsOwn(t *testing.T) {
	t.Parallel()
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	ny, _ := time.LoadLocation("America/New_York")
	// 20:00 in New York on 2026-12-24 is 10:00 on the 25th in Tokyo.
	hol := mustCalendar(t, "jp-holidays", tokyo, nil, "2026-12-25", "2026-12-25")
	s, err := schedule.Parse("0 20 * * *", schedule.Options{Location: ny, Skip: []*schedule.Calendar{hol}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Next(time.Date(2026, 12, 23, 21, 0, 0, 0, ny))
	if want := time.Date(2026, 12, 25, 20, 0, 0, 0, ny); !got.Equal(want) {
		t.Errorf("Next = %s, want %s: the 24th in New York is the 25th in Tokyo", got, want)
	}
	var removed []string
	for at, why := range s.CalendarSkipped(time.Date(2026, 12, 20, 0, 0, 0, 0, ny), time.Date(2026, 12, 30, 0, 0, 0, 0, ny)) {
		removed = append(removed, at.Format(time.DateOnly)+" "+why)
	}
	if want := []string{"2026-12-24 on jp-holidays"}; !slices.Equal(removed, want) {
		t.Errorf("CalendarSkipped = %q, want %q", removed, want)
	}
}

// The schedules that cannot take a window or calendars say why.
func TestBoundsRefused(t *testing.T) {
	t.Parallel()
	hol := mustCalendar(t, "holidays", nil, nil, "2026-12-25", "2026-12-25")
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		expr string
		opts schedule.Options
		want string
	}{
		{"triggered", schedule.Options{Active: schedule.Window{From: t0}}, "a triggered schedule has no fire times for an active window to bound"},
		{"@every 10m", schedule.Options{Skip: []*schedule.Calendar{hol}},
			`calendars apply to the fire times of a cron schedule; interval has none (an interval counts from the end of the previous run): write it as cron, e.g. "*/10 * * * *"`},
		{"0 * * * *", schedule.Options{Active: schedule.Window{From: t0, Until: t0.Add(-time.Second)}},
			"the active window ends (2026-02-28T23:59:59Z) before it starts (2026-03-01T00:00:00Z)"},
	} {
		if _, err := schedule.Parse(c.expr, c.opts); err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) = %v, want %q", c.expr, err, c.want)
		}
	}
}

// An interval's first occurrence in a window is the window's start, and
// it has none past its end.
func TestIntervalWindow(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s, err := schedule.Parse("@every 1h", schedule.Options{Active: schedule.Window{From: from, Until: from.Add(90 * time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []time.Time
	for at, ok := s.Next(from.Add(-10 * time.Hour)); ok; at, ok = s.Next(at) {
		got = append(got, at)
	}
	if want := []time.Time{from, from.Add(time.Hour)}; !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("occurrences %v, want %v", got, want)
	}
}

// Explain names the calendars and the window after the schedule itself.
func TestExplainBounds(t *testing.T) {
	t.Parallel()
	ny, _ := time.LoadLocation("America/New_York")
	s, err := schedule.Parse("30 9 * * *", schedule.Options{
		Location: ny,
		Only:     []*schedule.Calendar{mustCalendar(t, "business-days", nil, weekdays)},
		Skip:     []*schedule.Calendar{mustCalendar(t, "holidays", nil, nil, "2026-12-25", "2026-12-25"), mustCalendar(t, "freeze", nil, nil, "2026-12-20", "2026-12-31")},
		Active:   schedule.Window{From: time.Date(2026, 1, 5, 0, 0, 0, 0, ny), Until: time.Date(2026, 12, 31, 23, 59, 59, 0, ny)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "At 09:30, America/New_York; only on days of business-days; not on days of holidays or freeze; active from 2026-01-05 00:00:00 EST until 2026-12-31 23:59:59 EST"
	if got := s.Explain(); got != want {
		t.Errorf("Explain()\n got %q\nwant %q", got, want)
	}
}

// A skip calendar with every weekday leaves no occurrence, and Next says
// so rather than search for ever.
func TestCalendarsThatRemoveEverything(t *testing.T) {
	t.Parallel()
	all := mustCalendar(t, "always", nil, []time.Weekday{0, 1, 2, 3, 4, 5, 6})
	s, err := schedule.Parse("* * * * *", schedule.Options{Skip: []*schedule.Calendar{all}})
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := s.Next(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)); ok {
		t.Errorf("Next = %s, want none", at)
	}
	saturdays := mustCalendar(t, "saturdays", nil, []time.Weekday{time.Saturday})
	s, err = schedule.Parse("0 0 * * *", schedule.Options{Skip: []*schedule.Calendar{saturdays}, Only: []*schedule.Calendar{saturdays}})
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := s.Next(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)); ok {
		t.Errorf("Next = %s, want none", at)
	}
	if at, ok := s.Prev(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)); ok {
		t.Errorf("Prev = %s, want none", at)
	}
}
