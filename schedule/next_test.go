package schedule_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

// The expected fire times in these tables were worked out from a calendar
// (2026-01-01 is a Thursday; 2026-02-28 a Saturday), not copied from what the
// implementation prints.

// mustInstant parses an RFC 3339 instant of a test table.
func mustInstant(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("bad instant in test table: %v", err)
	}
	return at
}

// mustZone loads an IANA zone or fails the test.
func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

// parseForTest parses expr or fails the test.
func parseForTest(t *testing.T, expr string, opts schedule.Options) *schedule.Schedule {
	t.Helper()
	s, err := schedule.Parse(expr, opts)
	if err != nil {
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	return s
}

// nextChain returns up to n fire times after from, each formatted as RFC 3339
// in the schedule's zone (so the offset is checked too), and whether Next
// still had an answer after them.
func nextChain(s *schedule.Schedule, from time.Time, n int) (got []string, more bool) {
	at := from
	for range n {
		next, ok := s.Next(at)
		if !ok {
			return got, false
		}
		if !next.After(at) {
			got = append(got, fmt.Sprintf("%s (not after %s)", next.Format(time.RFC3339), at.Format(time.RFC3339)))
			return got, false
		}
		got = append(got, next.Format(time.RFC3339))
		at = next
	}
	_, more = s.Next(at)
	return got, more
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkPrevMirrorsNext checks that Prev agrees with a chain of fire times:
// each fire time is its own Prev (Prev is inclusive), and one second before
// it, Prev is the fire time before it in the chain.
func checkPrevMirrorsNext(t *testing.T, s *schedule.Schedule, want []string) {
	t.Helper()
	for i, w := range want {
		at := mustInstant(t, w)
		if got, ok := s.Prev(at); !ok || got.Format(time.RFC3339) != w {
			t.Errorf("Prev(%s) = %s, %v; want %s (inclusive)", w, got.Format(time.RFC3339), ok, w)
		}
		if i == 0 {
			continue
		}
		before := at.Add(-time.Second)
		if got, ok := s.Prev(before); !ok || got.Format(time.RFC3339) != want[i-1] {
			t.Errorf("Prev(%s) = %s, %v; want %s", before.Format(time.RFC3339), got.Format(time.RFC3339), ok, want[i-1])
		}
	}
}

// fireCase is one schedule, the instant to start from, and the fire times
// that follow it.
type fireCase struct {
	name string
	expr string
	opts schedule.Options
	from string
	want []string
	// end says Next has no answer after the last time in want.
	end bool
}

func runFireCases(t *testing.T, cases []fireCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parseForTest(t, tc.expr, tc.opts)
			if s.Kind() != schedule.Cron {
				t.Fatalf("Kind() = %v, want cron", s.Kind())
			}
			got, more := nextChain(s, mustInstant(t, tc.from), len(tc.want))
			if !equalStrings(got, tc.want) {
				t.Errorf("%q after %s:\n got  %q\n want %q", tc.expr, tc.from, got, tc.want)
			}
			if more == tc.end {
				t.Errorf("%q: Next after %s answered %v, want %v", tc.expr, tc.want[len(tc.want)-1], more, !tc.end)
			}
			checkPrevMirrorsNext(t, s, tc.want)
		})
	}
}

const jan1 = "2026-01-01T00:00:00Z" // a Thursday

func TestNextFieldCounts(t *testing.T) {
	t.Parallel()
	runFireCases(t, []fireCase{
		{name: "five fields are minute hour day-of-month month day-of-week and fire at second 0", expr: "30 4 * * *", from: jan1,
			want: []string{"2026-01-01T04:30:00Z", "2026-01-02T04:30:00Z", "2026-01-03T04:30:00Z"}},
		{name: "six fields put seconds first", expr: "15 30 4 * * *", from: jan1,
			want: []string{"2026-01-01T04:30:15Z", "2026-01-02T04:30:15Z", "2026-01-03T04:30:15Z"}},
		{name: "seven fields put the year last", expr: "0 0 12 1 1 * 2027,2029", from: jan1,
			want: []string{"2027-01-01T12:00:00Z", "2029-01-01T12:00:00Z"}, end: true},
		{name: "seven fields with a year range run out after its last year", expr: "0 0 0 30-31 12 * 2026-2027", from: jan1,
			want: []string{"2026-12-30T00:00:00Z", "2026-12-31T00:00:00Z", "2027-12-30T00:00:00Z", "2027-12-31T00:00:00Z"}, end: true},
		{name: "seven fields with a year step start at the given year", expr: "0 0 0 1 1 * 2026/5", from: jan1,
			want: []string{"2031-01-01T00:00:00Z", "2036-01-01T00:00:00Z", "2041-01-01T00:00:00Z"}},
		{name: "seven fields with year * never run out", expr: "0 0 0 1 1 * *", from: jan1,
			want: []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{name: "extra spaces between fields are ignored", expr: "  30   4 *\t* *  ", from: jan1,
			want: []string{"2026-01-01T04:30:00Z", "2026-01-02T04:30:00Z"}},
	})
}

func TestNextStarRangeStepList(t *testing.T) {
	t.Parallel()
	runFireCases(t, []fireCase{
		{name: "star fires every minute, strictly after from", expr: "* * * * *", from: jan1,
			want: []string{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z"}},
		{name: "star in the seconds field fires every second", expr: "* * * * * *", from: jan1,
			want: []string{"2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:03Z"}},
		{name: "a range fires on each value in it", expr: "0 9-11 * * *", from: jan1,
			want: []string{"2026-01-01T09:00:00Z", "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-02T09:00:00Z"}},
		{name: "a one-value range is that value", expr: "0 9-9 * * *", from: jan1,
			want: []string{"2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z"}},
		{name: "a step over star counts from the start of the field", expr: "*/20 * * * *", from: jan1,
			want: []string{"2026-01-01T00:20:00Z", "2026-01-01T00:40:00Z", "2026-01-01T01:00:00Z", "2026-01-01T01:20:00Z"}},
		{name: "a step that does not divide the field restarts every hour", expr: "*/25 * * * *", from: jan1,
			want: []string{"2026-01-01T00:25:00Z", "2026-01-01T00:50:00Z", "2026-01-01T01:00:00Z", "2026-01-01T01:25:00Z"}},
		{name: "a step over a range stays inside the range", expr: "10-30/10 * * * *", from: jan1,
			want: []string{"2026-01-01T00:10:00Z", "2026-01-01T00:20:00Z", "2026-01-01T00:30:00Z", "2026-01-01T01:10:00Z"}},
		{name: "a step from a single value runs to the end of the field", expr: "5/20 * * * *", from: jan1,
			want: []string{"2026-01-01T00:05:00Z", "2026-01-01T00:25:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:05:00Z"}},
		{name: "a step from a day of month skips months without the day", expr: "0 0 10/10 * *", from: jan1,
			want: []string{"2026-01-10T00:00:00Z", "2026-01-20T00:00:00Z", "2026-01-30T00:00:00Z",
				"2026-02-10T00:00:00Z", "2026-02-20T00:00:00Z", "2026-03-10T00:00:00Z"}},
		{name: "a step of hours", expr: "0 */6 * * *", from: jan1,
			want: []string{"2026-01-01T06:00:00Z", "2026-01-01T12:00:00Z", "2026-01-01T18:00:00Z", "2026-01-02T00:00:00Z"}},
		{name: "a step of months", expr: "0 0 1 */4 *", from: jan1,
			want: []string{"2026-05-01T00:00:00Z", "2026-09-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
		{name: "a list mixes values, ranges and steps", expr: "0 1,3-4,22/2 * * *", from: jan1,
			want: []string{"2026-01-01T01:00:00Z", "2026-01-01T03:00:00Z", "2026-01-01T04:00:00Z", "2026-01-01T22:00:00Z", "2026-01-02T01:00:00Z"}},
		{name: "a list of minutes", expr: "0,15,45 * * * *", from: jan1,
			want: []string{"2026-01-01T00:15:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:00:00Z", "2026-01-01T01:15:00Z"}},
		{name: "a list with a value twice fires once", expr: "15,15,10-20/5 * * * *", from: jan1,
			want: []string{"2026-01-01T00:10:00Z", "2026-01-01T00:15:00Z", "2026-01-01T00:20:00Z", "2026-01-01T01:10:00Z"}},
		{name: "a list of seconds", expr: "0,30 * * * * *", from: jan1,
			want: []string{"2026-01-01T00:00:30Z", "2026-01-01T00:01:00Z", "2026-01-01T00:01:30Z"}},
		{name: "the last second of the year rolls into the next year", expr: "59 59 23 31 12 *", from: "2026-12-31T23:59:58Z",
			want: []string{"2026-12-31T23:59:59Z", "2027-12-31T23:59:59Z"}},
	})
}

func TestNextNames(t *testing.T) {
	t.Parallel()
	runFireCases(t, []fireCase{
		{name: "month names in any case", expr: "0 0 1 JAN,jul *", from: jan1,
			want: []string{"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z", "2027-07-01T00:00:00Z"}},
		{name: "a range of month names", expr: "0 0 1 Mar-May *", from: jan1,
			want: []string{"2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z", "2027-03-01T00:00:00Z"}},
		{name: "month names with a step", expr: "0 0 1 FEB-DEC/3 *", from: jan1,
			want: []string{"2026-02-01T00:00:00Z", "2026-05-01T00:00:00Z", "2026-08-01T00:00:00Z", "2026-11-01T00:00:00Z", "2027-02-01T00:00:00Z"}},
		{name: "a range of day names in lower case", expr: "0 0 * * mon-wed", from: jan1,
			want: []string{"2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z", "2026-01-07T00:00:00Z", "2026-01-12T00:00:00Z"}},
		{name: "a list of day names in mixed case", expr: "0 0 * * Sat,SUN", from: jan1,
			want: []string{"2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-10T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{name: "7 is Sunday", expr: "0 0 * * 7", from: jan1,
			want: []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-18T00:00:00Z"}},
		{name: "5-7 is Friday to Sunday", expr: "0 0 * * 5-7", from: jan1,
			want: []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z"}},
		{name: "0 and 7 together are Sunday once", expr: "0 0 * * 0,7", from: jan1,
			want: []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{name: "a step over day of week star is Sunday Tuesday Thursday Saturday", expr: "0 0 * * */2", from: jan1,
			want: []string{"2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-06T00:00:00Z", "2026-01-08T00:00:00Z"}},
		{name: "a question mark in day of month leaves the choice to day of week", expr: "0 0 ? * MON", from: jan1,
			want: []string{"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z"}},
		{name: "a question mark in day of week leaves the choice to day of month", expr: "0 0 15 * ?", from: jan1,
			want: []string{"2026-01-15T00:00:00Z", "2026-02-15T00:00:00Z", "2026-03-15T00:00:00Z"}},
	})
}

func TestNextLastWeekdayNth(t *testing.T) {
	t.Parallel()
	runFireCases(t, []fireCase{
		{name: "L is the last day of the month", expr: "0 0 L * *", from: jan1,
			want: []string{"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z"}},
		{name: "L is the 29th of February in a leap year", expr: "0 0 L 2 *", from: jan1,
			want: []string{"2026-02-28T00:00:00Z", "2027-02-28T00:00:00Z", "2028-02-29T00:00:00Z"}},
		{name: "L-3 is three days before the last day", expr: "0 0 L-3 * *", from: jan1,
			want: []string{"2026-01-28T00:00:00Z", "2026-02-25T00:00:00Z", "2026-03-28T00:00:00Z", "2026-04-27T00:00:00Z"}},
		{name: "L in a list with a plain day", expr: "0 0 1,L * *", from: jan1,
			want: []string{"2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-01T00:00:00Z"}},
		{name: "LW is the last Monday-to-Friday of the month", expr: "0 0 LW * *", from: jan1,
			// Jan 31 and Feb 28 are Saturdays, May 31 a Sunday.
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z", "2026-05-29T00:00:00Z"}},
		{name: "15W is the weekday nearest the 15th: Sunday moves to Monday", expr: "0 0 15W * *", from: jan1,
			// Jan 15 Thursday; Feb 15 and Mar 15 Sundays; Apr 15 Wednesday.
			want: []string{"2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z", "2026-04-15T00:00:00Z"}},
		{name: "15W on a Saturday moves back to Friday the 14th", expr: "0 0 15W 8 *", from: jan1,
			want: []string{"2026-08-14T00:00:00Z", "2027-08-16T00:00:00Z"}},
		{name: "1W on a Saturday moves forward to Monday the 3rd, not back into the previous month", expr: "0 0 1W * *", from: "2026-07-02T00:00:00Z",
			// Aug 1 Saturday, Sep 1 Tuesday, Oct 1 Thursday, Nov 1 Sunday.
			want: []string{"2026-08-03T00:00:00Z", "2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z", "2026-11-02T00:00:00Z"}},
		{name: "31W does not fire in a month without a 31st and moves a month-end Sunday back to Friday", expr: "0 0 31W * *", from: "2026-04-01T00:00:00Z",
			// Apr, Jun, Sep have 30 days; May 31 Sunday; Jul 31 Friday; Aug 31 Monday; Oct 31 Saturday.
			want: []string{"2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", "2026-10-30T00:00:00Z"}},
		{name: "5L is the last Friday of the month", expr: "0 0 * * 5L", from: jan1,
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z", "2026-04-24T00:00:00Z"}},
		{name: "FRIL is the last Friday of the month too", expr: "0 0 * * FRIL", from: jan1,
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z", "2026-04-24T00:00:00Z"}},
		{name: "7L is the last Sunday of the month", expr: "0 0 * * 7L", from: jan1,
			want: []string{"2026-01-25T00:00:00Z", "2026-02-22T00:00:00Z", "2026-03-29T00:00:00Z"}},
		{name: "MON#2 is the second Monday of the month", expr: "0 0 * * MON#2", from: jan1,
			want: []string{"2026-01-12T00:00:00Z", "2026-02-09T00:00:00Z", "2026-03-09T00:00:00Z", "2026-04-13T00:00:00Z"}},
		{name: "1#1 is the first Monday of the month", expr: "0 0 * * 1#1", from: jan1,
			want: []string{"2026-01-05T00:00:00Z", "2026-02-02T00:00:00Z", "2026-03-02T00:00:00Z"}},
		{name: "MON#5 fires only in months with five Mondays", expr: "0 0 * * MON#5", from: jan1,
			want: []string{"2026-03-30T00:00:00Z", "2026-06-29T00:00:00Z", "2026-08-31T00:00:00Z", "2026-11-30T00:00:00Z"}},
		{name: "day of week specials in a list", expr: "0 0 * * MON#1,FRIL", from: jan1,
			want: []string{"2026-01-05T00:00:00Z", "2026-01-30T00:00:00Z", "2026-02-02T00:00:00Z", "2026-02-27T00:00:00Z"}},
	})
}

func TestNextMacros(t *testing.T) {
	t.Parallel()
	runFireCases(t, []fireCase{
		{name: "@yearly is midnight on January 1", expr: "@yearly", from: jan1,
			want: []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{name: "@annually is @yearly", expr: "@annually", from: jan1,
			want: []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{name: "@monthly is midnight on the 1st", expr: "@monthly", from: jan1,
			want: []string{"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}},
		{name: "@weekly is midnight on Sunday", expr: "@weekly", from: jan1,
			want: []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-18T00:00:00Z"}},
		{name: "@daily is midnight", expr: "@daily", from: jan1,
			want: []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
		{name: "@midnight is @daily", expr: "@midnight", from: jan1,
			want: []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
		{name: "@hourly is minute 0", expr: "@hourly", from: jan1,
			want: []string{"2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z"}},
		{name: "macros are case-insensitive", expr: "@DAILY", from: jan1,
			want: []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
		{name: "a macro with a time zone prefix", expr: "CRON_TZ=Asia/Tokyo @daily", from: jan1,
			want: []string{"2026-01-02T00:00:00+09:00", "2026-01-03T00:00:00+09:00"}},
	})
}

func TestNextDayOfMonthAndDayOfWeek(t *testing.T) {
	t.Parallel()
	runFireCases(t, []fireCase{
		{name: "both restricted: the 13th or any Friday", expr: "0 0 13 * 5", from: "2026-03-01T00:00:00Z",
			// Mar 13 is a Friday (fires once); Apr 13 is a Monday.
			want: []string{"2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z", "2026-03-20T00:00:00Z", "2026-03-27T00:00:00Z",
				"2026-04-03T00:00:00Z", "2026-04-10T00:00:00Z", "2026-04-13T00:00:00Z", "2026-04-17T00:00:00Z"}},
		{name: "both restricted: the 1st or any Monday", expr: "0 0 1 * MON", from: jan1,
			want: []string{"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z", "2026-01-26T00:00:00Z",
				"2026-02-01T00:00:00Z", "2026-02-02T00:00:00Z"}},
		{name: "day of month starting with star: odd days that are also Mondays", expr: "0 0 */2 * 1", from: jan1,
			want: []string{"2026-01-05T00:00:00Z", "2026-01-19T00:00:00Z", "2026-02-09T00:00:00Z", "2026-02-23T00:00:00Z"}},
		{name: "day of week starting with star: the 1st to the 7th that are also Sun, Tue, Thu or Sat", expr: "0 0 1-7 * */2", from: jan1,
			// Jan: 3 Sat, 4 Sun, 6 Tue; Feb 1 Sun, 3 Tue, 5 Thu, 7 Sat.
			want: []string{"2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-06T00:00:00Z",
				"2026-02-01T00:00:00Z", "2026-02-03T00:00:00Z", "2026-02-05T00:00:00Z", "2026-02-07T00:00:00Z"}},
		{name: "question mark in day of week: the 13th only", expr: "0 0 13 * ?", from: "2026-03-01T00:00:00Z",
			want: []string{"2026-03-13T00:00:00Z", "2026-04-13T00:00:00Z"}},
		{name: "L or Friday", expr: "0 0 L * FRI", from: "2026-01-20T00:00:00Z",
			want: []string{"2026-01-23T00:00:00Z", "2026-01-30T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-06T00:00:00Z"}},
		{name: "29 February fires in leap years only", expr: "0 0 29 2 *", from: jan1,
			want: []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}},
		{name: "the fifth Monday of February is a Monday 29 February", expr: "0 0 * 2 MON#5", from: jan1,
			want: []string{"2044-02-29T00:00:00Z", "2072-02-29T00:00:00Z"}},
		{name: "the year 2100 is not a leap year", expr: "0 0 29 2 *", from: "2096-03-01T00:00:00Z",
			want: []string{"2104-02-29T00:00:00Z"}},
	})
}

func TestNextTimeZonePrefixes(t *testing.T) {
	t.Parallel()
	runFireCases(t, []fireCase{
		{name: "CRON_TZ= sets the zone; a fire time equal to from is not next", expr: "CRON_TZ=Asia/Tokyo 0 9 * * *", from: jan1,
			want: []string{"2026-01-02T09:00:00+09:00", "2026-01-03T09:00:00+09:00"}},
		{name: "TZ= sets the zone", expr: "TZ=Europe/Paris 0 9 * * *", from: jan1,
			want: []string{"2026-01-01T09:00:00+01:00", "2026-01-02T09:00:00+01:00"}},
		{name: "a prefix may repeat the zone of the options", expr: "TZ=Europe/Paris 0 9 * * *",
			opts: schedule.Options{Location: mustZone(t, "Europe/Paris")}, from: jan1,
			want: []string{"2026-01-01T09:00:00+01:00", "2026-01-02T09:00:00+01:00"}},
		{name: "the zone of the options applies without a prefix", expr: "0 9 * * *",
			opts: schedule.Options{Location: mustZone(t, "America/Los_Angeles")}, from: jan1,
			want: []string{"2026-01-01T09:00:00-08:00", "2026-01-02T09:00:00-08:00"}},
		{name: "TZ=UTC", expr: "TZ=UTC 0 9 * * *", from: jan1,
			want: []string{"2026-01-01T09:00:00Z"}},
		{name: "Asia/Kathmandu midnight is 18:15 UTC the day before", expr: "CRON_TZ=Asia/Kathmandu 0 0 * * *", from: jan1,
			want: []string{"2026-01-02T00:00:00+05:45", "2026-01-03T00:00:00+05:45"}},
	})
}

// A year field entirely in the past is valid (it fired once); it just has
// no next fire time.
func TestNextYearsInThePast(t *testing.T) {
	t.Parallel()
	s := parseForTest(t, "0 0 0 1 1 * 1999,2001", schedule.Options{})
	if got, ok := s.Next(mustInstant(t, jan1)); ok {
		t.Errorf("Next = %s, want none", got.Format(time.RFC3339))
	}
	if got, ok := s.Prev(mustInstant(t, jan1)); !ok || got.Format(time.RFC3339) != "2001-01-01T00:00:00Z" {
		t.Errorf("Prev = %s, %v; want 2001-01-01T00:00:00Z", got.Format(time.RFC3339), ok)
	}
	if got, ok := s.Next(mustInstant(t, "1970-01-01T00:00:00Z")); !ok || got.Format(time.RFC3339) != "1999-01-01T00:00:00Z" {
		t.Errorf("Next(1970) = %s, %v; want 1999-01-01T00:00:00Z", got.Format(time.RFC3339), ok)
	}
}

func TestNextKathmanduInUTC(t *testing.T) {
	t.Parallel()
	s := parseForTest(t, "0 0 * * *", schedule.Options{Location: mustZone(t, "Asia/Kathmandu")})
	got, ok := s.Next(mustInstant(t, "2026-01-01T12:00:00Z"))
	if want := "2026-01-01T18:15:00Z"; !ok || got.UTC().Format(time.RFC3339) != want {
		t.Errorf("Next = %v, %v; want %s", got, ok, want)
	}
}

func TestNextFromBetweenSeconds(t *testing.T) {
	t.Parallel()
	s := parseForTest(t, "* * * * *", schedule.Options{})
	from := mustInstant(t, "2026-01-01T00:00:30Z").Add(500 * time.Millisecond)
	if got, ok := s.Next(from); !ok || got.Format(time.RFC3339Nano) != "2026-01-01T00:01:00Z" {
		t.Errorf("Next(00:00:30.5) = %v, %v; want 00:01:00", got, ok)
	}
	// Next is strictly after: a fraction of a second past a fire time is past it.
	from = mustInstant(t, "2026-01-01T00:01:00Z").Add(time.Nanosecond)
	if got, ok := s.Next(from); !ok || got.Format(time.RFC3339Nano) != "2026-01-01T00:02:00Z" {
		t.Errorf("Next(00:01:00.000000001) = %v, %v; want 00:02:00", got, ok)
	}
	// Prev is inclusive and never later than t.
	if got, ok := s.Prev(from); !ok || got.Format(time.RFC3339Nano) != "2026-01-01T00:01:00Z" {
		t.Errorf("Prev(00:01:00.000000001) = %v, %v; want 00:01:00", got, ok)
	}
}

func TestPrev(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		expr string
		at   string
		want string // "" for none
	}{
		{"a fire time is its own Prev", "30 4 * * *", "2026-01-02T04:30:00Z", "2026-01-02T04:30:00Z"},
		{"one second before a fire time is the day before", "30 4 * * *", "2026-01-02T04:29:59Z", "2026-01-01T04:30:00Z"},
		{"L looks back into February", "0 0 L * *", "2026-03-15T00:00:00Z", "2026-02-28T00:00:00Z"},
		{"MON#5 looks back over months without a fifth Monday", "0 0 * * MON#5", "2026-06-01T00:00:00Z", "2026-03-30T00:00:00Z"},
		{"15W does not fire before the weekday it moved to", "0 0 15W * *", "2026-03-15T12:00:00Z", "2026-02-16T00:00:00Z"},
		{"the 13th or a Friday: the Friday", "0 0 13 * 5", "2026-04-12T00:00:00Z", "2026-04-10T00:00:00Z"},
		{"the 13th or a Friday: the 13th at the instant", "0 0 13 * 5", "2026-04-13T00:00:00Z", "2026-04-13T00:00:00Z"},
		{"a step restarting each hour", "*/25 * * * *", "2026-01-01T01:10:00Z", "2026-01-01T01:00:00Z"},
		{"a step restarting each hour, before the top of the hour", "*/25 * * * *", "2026-01-01T00:59:59Z", "2026-01-01T00:50:00Z"},
		{"29 February looks back to the last leap year", "0 0 29 2 *", "2026-01-01T00:00:00Z", "2024-02-29T00:00:00Z"},
		{"the fifth Monday of February looks back to 2016", "0 0 * 2 MON#5", "2026-01-01T00:00:00Z", "2016-02-29T00:00:00Z"},
		{"years: the last fire time after the years ran out", "0 0 0 1 1 * 2026-2027", "2030-06-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"years: nothing before the first year", "0 0 0 1 1 * 2026-2027", "2025-12-31T23:59:59Z", ""},
		{"years: the first fire time is inclusive", "0 0 0 1 1 * 2026-2027", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"},
		{"a zone prefix: the fire time in the zone", "CRON_TZ=Asia/Tokyo 0 9 * * *", "2026-01-01T00:00:00Z", "2026-01-01T09:00:00+09:00"},
		{"a macro", "@weekly", "2026-01-10T23:59:59Z", "2026-01-04T00:00:00Z"},
		{"six fields", "*/10 * * * * *", "2026-01-01T00:00:09Z", "2026-01-01T00:00:00Z"},
		{"the last second of a year from the next year", "59 59 23 31 12 *", "2027-01-01T00:00:00Z", "2026-12-31T23:59:59Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parseForTest(t, tc.expr, schedule.Options{})
			got, ok := s.Prev(mustInstant(t, tc.at))
			switch {
			case tc.want == "" && ok:
				t.Errorf("Prev(%s) = %s, want none", tc.at, got.Format(time.RFC3339))
			case tc.want != "" && (!ok || got.Format(time.RFC3339) != tc.want):
				t.Errorf("Prev(%s) = %s, %v; want %s", tc.at, got.Format(time.RFC3339), ok, tc.want)
			}
		})
	}
}

func TestIntervalSchedules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		expr string
		want time.Duration
	}{
		{"@every with seconds", "@every 90s", 90 * time.Second},
		{"@every with hours and minutes", "@every 1h30m", 90 * time.Minute},
		{"with ... interval", "with 10m interval", 10 * time.Minute},
		{"@every one second is the shortest", "@every 1s", time.Second},
		{"@every with a zone prefix", "CRON_TZ=Europe/Paris @every 5m", 5 * time.Minute},
		{"@every is case-insensitive like the macros", "@EVERY 5m", 5 * time.Minute},
	}
	from := mustInstant(t, "2026-03-08T06:59:00Z") // just before New York springs forward
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parseForTest(t, tc.expr, schedule.Options{})
			if s.Kind() != schedule.Interval || s.Interval() != tc.want {
				t.Fatalf("Kind() = %v, Interval() = %v; want interval, %v", s.Kind(), s.Interval(), tc.want)
			}
			next, ok := s.Next(from)
			if !ok || !next.Equal(from.Add(tc.want)) {
				t.Errorf("Next(%s) = %v, %v; want %v", from, next, ok, from.Add(tc.want))
			}
			if next.Location() != s.Location() {
				t.Errorf("Next is in %v, want the schedule's zone %v", next.Location(), s.Location())
			}
			if got, ok := s.Prev(from); ok {
				t.Errorf("Prev = %v, true; an interval has no fixed fire times", got)
			}
		})
	}
}
