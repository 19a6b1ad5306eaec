package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

// A calendar typed on one line reads its weekdays, dates and ranges as a
// config's calendars write them, apart by commas or spaces; a word that
// is none of them, or a range that ends before it starts, is refused by
// name.
func TestCalendarText(t *testing.T) {
	t.Parallel()
	c, err := schedule.CalendarText("days off", "sat-sun, 2026-12-24..2026-12-26  2027-01-01,")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.String(), "days off (Sunday and Saturday and 4 dates from 2026-12-24 to 2027-01-01)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, d := range []string{"2026-12-25", "2027-01-01", "2026-03-07"} {
		day, _ := schedule.ParseDate(d)
		if !c.Has(day) {
			t.Errorf("%s is not one of the calendar's days", d)
		}
	}
	if day, _ := schedule.ParseDate("2026-12-28"); c.Has(day) || c.Location() != nil || len(c.Weekdays()) != 2 || c.Weekdays()[0] != time.Sunday {
		t.Errorf("the calendar holds more than it was given: %v", c)
	}
	for text, want := range map[string]string{
		"":                       "no days",
		"mon, holidays":          `"holidays": want a weekday`,
		"2026-12-26..2026-12-24": "the range ends before it starts",
	} {
		if _, err := schedule.CalendarText("x", text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CalendarText(%q): %v, want an error saying %q", text, err, want)
		}
	}
}
