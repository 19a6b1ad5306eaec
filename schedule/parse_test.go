package schedule_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

// Every message a user can get for a bad schedule, in full: these are what
// `sundial validate` prints next to the file and line, so a change to one is
// a change to the product.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	ny := mustZone(t, "America/New_York")
	cases := []struct {
		name string
		expr string
		opts schedule.Options
		want string
	}{
		// The expression as a whole.
		{name: "empty", expr: "", want: "empty schedule"},
		{name: "only spaces", expr: "  \t ", want: "empty schedule"},
		{name: "four fields", expr: "* * * *",
			want: "expected 5 fields (minute hour day-of-month month day-of-week), 6 (seconds first) or 7 (year last), got 4"},
		{name: "eight fields", expr: "0 0 0 * * * * *",
			want: "expected 5 fields (minute hour day-of-month month day-of-week), 6 (seconds first) or 7 (year last), got 8"},
		{name: "one word that is not a keyword", expr: "hourly",
			want: "expected 5 fields (minute hour day-of-month month day-of-week), 6 (seconds first) or 7 (year last), got 1"},
		{name: "triggered is lower case", expr: "Triggered",
			want: "expected 5 fields (minute hour day-of-month month day-of-week), 6 (seconds first) or 7 (year last), got 1"},

		// Values out of range, field by field.
		{name: "second above 59", expr: "60 0 0 * * *", want: "field 1 (second): 60 is out of range 0-59"},
		{name: "minute above 59", expr: "60 * * * *", want: "field 1 (minute): 60 is out of range 0-59"},
		{name: "minute in six fields is field 2", expr: "0 60 * * * *", want: "field 2 (minute): 60 is out of range 0-59"},
		{name: "hour above 23", expr: "0 24 * * *", want: "field 2 (hour): 24 is out of range 0-23"},
		{name: "day of month above 31", expr: "0 0 32 * *", want: "field 3 (day of month): 32 is out of range 1-31"},
		{name: "day of month 0", expr: "0 0 0 * *", want: "field 3 (day of month): 0 is out of range 1-31"},
		{name: "day of month in six fields is field 4", expr: "0 0 0 32 * *", want: "field 4 (day of month): 32 is out of range 1-31"},
		{name: "month 0", expr: "0 0 1 0 *", want: "field 4 (month): 0 is out of range 1-12"},
		{name: "month 13", expr: "0 0 1 13 *", want: "field 4 (month): 13 is out of range 1-12"},
		{name: "day of week 8", expr: "0 0 * * 8", want: "field 5 (day of week): 8 is out of range 0-7"},
		{name: "year before 1970", expr: "0 0 0 1 1 * 1969", want: "field 7 (year): 1969 is out of range 1970-2199"},
		{name: "year after 2199", expr: "0 0 0 1 1 * 2200", want: "field 7 (year): 2200 is out of range 1970-2199"},
		{name: "the end of a range out of range", expr: "0 0 1-32 * *", want: "field 3 (day of month): 32 is out of range 1-31"},
		{name: "an absurdly long number is out of range, not wrapped around", expr: "99999999999999999999 * * * *",
			want: "field 1 (minute): 99999999999999999999 is out of range 0-59"},

		// Values that are not numbers or names.
		{name: "a word in minute", expr: "x * * * *", want: `field 1 (minute): "x" is not a number 0-59`},
		{name: "a sign", expr: "+5 * * * *", want: `field 1 (minute): "+5" is not a number 0-59`},
		{name: "a day name in minute", expr: "MON * * * *", want: `field 1 (minute): "MON" is not a number 0-59`},
		{name: "a full month name", expr: "0 0 1 JANUARY *", want: `field 4 (month): "JANUARY" is not a month name (JAN-DEC) or number 1-12`},
		{name: "a day name in month", expr: "0 0 1 MON *", want: `field 4 (month): "MON" is not a month name (JAN-DEC) or number 1-12`},
		{name: "a full day name", expr: "0 0 * * MONDAY", want: `field 5 (day of week): "MONDAY" is not a day name (SUN-SAT) or number 0-7`},
		{name: "a bad name at the end of a range", expr: "0 0 * * MON-FRY", want: `field 5 (day of week): "FRY" is not a day name (SUN-SAT) or number 0-7`},
		{name: "a month name in day of month", expr: "0 0 JAN * *", want: `field 3 (day of month): "JAN" is not a number 1-31`},
		{name: "an empty element in a list", expr: "1,,2 * * * *", want: "field 1 (minute): empty element in a list"},
		{name: "a trailing comma", expr: "0 0 * * MON,", want: "field 5 (day of week): empty element in a list"},
		{name: "a negative number reads as a range without a start", expr: "-5 * * * *",
			want: `field 1 (minute): range "-5" needs a value on each side of the -, e.g. 0-59`},
		{name: "a range without an end", expr: "0 9- * * *",
			want: `field 2 (hour): range "9-" needs a value on each side of the -, e.g. 0-23`},
		{name: "a range with two dashes", expr: "0 0 * * 1-3-5",
			want: `field 5 (day of week): range "1-3-5" needs a value on each side of the -, e.g. 0-6`},

		// Ranges written backwards.
		{name: "a backwards range of hours", expr: "0 22-2 * * *",
			want: "field 2 (hour): range 22-2 is backwards; write it as a list, e.g. 22-23,0-2"},
		{name: "a backwards range of day names", expr: "0 0 * * FRI-MON",
			want: "field 5 (day of week): range FRI-MON is backwards; write it as a list, e.g. FRI-SAT,SUN-MON"},
		{name: "a backwards range of day numbers", expr: "0 0 * * 5-1",
			want: "field 5 (day of week): range 5-1 is backwards; write it as a list, e.g. 5-6,0-1"},
		{name: "a range from 7, which is Sunday", expr: "0 0 * * 7-2",
			want: "field 5 (day of week): range 7-2 is backwards; 7 is Sunday, write 0-2"},
		{name: "a backwards range of month names", expr: "0 0 1 NOV-FEB *",
			want: "field 4 (month): range NOV-FEB is backwards; write it as a list, e.g. NOV-DEC,JAN-FEB"},
		{name: "a backwards range of days of month with a step", expr: "0 0 20-10/2 * *",
			want: "field 3 (day of month): range 20-10 is backwards; write it as a list, e.g. 20-31,1-10"},

		// Steps.
		{name: "step 0", expr: "*/0 * * * *", want: "field 1 (minute): step 0 is out of range 1-59"},
		{name: "step 60 in minute", expr: "*/60 * * * *", want: "field 1 (minute): step 60 is out of range 1-59"},
		{name: "step 24 in hour", expr: "0 */24 * * *", want: "field 2 (hour): step 24 is out of range 1-23"},
		{name: "step 31 in day of month", expr: "0 0 */31 * *", want: "field 3 (day of month): step 31 is out of range 1-30"},
		{name: "step 12 in month", expr: "0 0 1 */12 *", want: "field 4 (month): step 12 is out of range 1-11"},
		{name: "step 7 in day of week", expr: "0 0 * * */7", want: "field 5 (day of week): step 7 is out of range 1-6"},
		{name: "step on a range", expr: "0-30/0 * * * *", want: "field 1 (minute): step 0 is out of range 1-59"},
		{name: "a step that is not a number", expr: "*/x * * * *", want: `field 1 (minute): step "x" is not a number`},
		{name: "a missing step", expr: "*/ * * * *", want: `field 1 (minute): step "" is not a number`},
		{name: "two steps", expr: "*/2/3 * * * *", want: `field 1 (minute): step "2/3" is not a number`},

		// ? outside the day fields.
		{name: "? in minute", expr: "? * * * *", want: "field 1 (minute): ? is only allowed in day of month and day of week"},
		{name: "? in month", expr: "0 0 1 ? *", want: "field 4 (month): ? is only allowed in day of month and day of week"},

		// L, W and #.
		{name: "L-0", expr: "0 0 L-0 * *", want: `field 3 (day of month): "L-0": expected L-1 to L-30 (days before the last day of the month)`},
		{name: "L-31", expr: "0 0 L-31 * *", want: `field 3 (day of month): "L-31": expected L-1 to L-30 (days before the last day of the month)`},
		{name: "L with a number after it", expr: "0 0 L3 * *", want: `field 3 (day of month): "L3": expected L, L-n, LW or nW`},
		{name: "0W", expr: "0 0 0W * *", want: `field 3 (day of month): "0W": expected 1W to 31W (the weekday nearest a day) or LW`},
		{name: "32W", expr: "0 0 32W * *", want: `field 3 (day of month): "32W": expected 1W to 31W (the weekday nearest a day) or LW`},
		{name: "W alone", expr: "0 0 W * *", want: `field 3 (day of month): "W": expected 1W to 31W (the weekday nearest a day) or LW`},
		{name: "a step on L", expr: "0 0 L/2 * *", want: `field 3 (day of month): "L/2": a step is not allowed with L or W`},
		{name: "a step on W", expr: "0 0 15W/2 * *", want: `field 3 (day of month): "15W/2": a step is not allowed with L or W`},
		{name: "L alone in day of week", expr: "0 0 * * L",
			want: "field 5 (day of week): L in day of week needs a weekday before it, e.g. 5L or FRIL for the last Friday of the month"},
		{name: "a bad weekday before L", expr: "0 0 * * XL", want: `field 5 (day of week): "X" is not a day name (SUN-SAT) or number 0-7`},
		{name: "a step on nL", expr: "0 0 * * 5L/2", want: `field 5 (day of week): "5L/2": a step is not allowed with L or #`},
		{name: "#6", expr: "0 0 * * MON#6", want: `field 5 (day of week): "MON#6": expected #1 to #5 after the weekday`},
		{name: "#0", expr: "0 0 * * 1#0", want: `field 5 (day of week): "1#0": expected #1 to #5 after the weekday`},
		{name: "# without a number", expr: "0 0 * * MON#", want: `field 5 (day of week): "MON#": expected #1 to #5 after the weekday`},
		{name: "# without a weekday", expr: "0 0 * * #2",
			want: `field 5 (day of week): "#2": # needs a weekday before it, e.g. MON#2 for the second Monday of the month`},
		{name: "a bad weekday before #", expr: "0 0 * * MONDAY#2", want: `field 5 (day of week): "MONDAY" is not a day name (SUN-SAT) or number 0-7`},
		{name: "a step on #", expr: "0 0 * * MON#2/2", want: `field 5 (day of week): "MON#2/2": a step is not allowed with L or #`},
		{name: "L in minute", expr: "L * * * *", want: `field 1 (minute): "L" is not a number 0-59`},
		{name: "# in day of month", expr: "0 0 MON#2 * *", want: `field 3 (day of month): "MON#2" is not a number 1-31`},

		// H.
		{name: "H without a job id", expr: "H * * * *", want: "field 1 (minute): H needs a job id to derive its value from"},
		{name: "H with a range without a job id", expr: "0 H(0-5) * * *", want: "field 2 (hour): H needs a job id to derive its value from"},
		{name: "H in the year field", expr: "0 0 0 1 1 * H", opts: schedule.Options{JobID: "p/j"},
			want: "field 7 (year): H is not allowed in the year field"},
		{name: "H with an unclosed range", expr: "H(0-29 * * * *", opts: schedule.Options{JobID: "p/j"},
			want: `field 1 (minute): "H(0-29": expected H, H(a-b), H/n or H(a-b)/n`},
		{name: "H with one value", expr: "H(5) * * * *", opts: schedule.Options{JobID: "p/j"},
			want: `field 1 (minute): "H(5)": expected H, H(a-b), H/n or H(a-b)/n`},
		{name: "H followed by a letter", expr: "Hx * * * *", opts: schedule.Options{JobID: "p/j"},
			want: `field 1 (minute): "Hx": expected H, H(a-b), H/n or H(a-b)/n`},
		{name: "H with a backwards range", expr: "H(29-0) * * * *", opts: schedule.Options{JobID: "p/j"},
			want: "field 1 (minute): range 29-0 in H(29-0) is backwards"},
		{name: "H with a range out of the field", expr: "0 H(0-24) * * *", opts: schedule.Options{JobID: "p/j"},
			want: "field 2 (hour): 24 is out of range 0-23"},
		{name: "H with step 0", expr: "H/0 * * * *", opts: schedule.Options{JobID: "p/j"},
			want: "field 1 (minute): step 0 is out of range 1-59"},
		{name: "H with a step too large", expr: "H(0-29)/60 * * * *", opts: schedule.Options{JobID: "p/j"},
			want: "field 1 (minute): step 60 is out of range 1-59"},
		{name: "H with step 7 in day of week", expr: "0 0 * * H/7", opts: schedule.Options{JobID: "p/j"},
			want: "field 5 (day of week): step 7 is out of range 1-6"},

		// Macros.
		{name: "an unknown macro", expr: "@fortnightly",
			want: `unknown macro "@fortnightly"; expected @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>`},
		{name: "@ alone", expr: "@",
			want: `unknown macro "@"; expected @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>`},
		{name: "a macro followed by fields", expr: "@daily 0 0",
			want: `@daily is a whole schedule; nothing may follow it, got "@daily 0 0"`},

		// Intervals.
		{name: "@every 0s", expr: "@every 0s", want: "interval 0s is shorter than 1s"},
		{name: "@every below a second", expr: "@every 500ms", want: "interval 500ms is shorter than 1s"},
		{name: "@every negative", expr: "@every -1m", want: "interval -1m is shorter than 1s"},
		{name: "@every 1.5s", expr: "@every 1.5s", want: "interval 1.5s is not a whole number of seconds"},
		{name: "@every x", expr: "@every x", want: `interval "x" is not a duration such as 90s, 10m or 1h30m`},
		{name: "@every a number without a unit", expr: "@every 90", want: `interval "90" is not a duration such as 90s, 10m or 1h30m`},
		{name: "@every without a duration", expr: "@every",
			want: `"@every": expected "@every <duration>" or "with <duration> interval"`},
		{name: "@every with two durations", expr: "@every 1m 2m",
			want: `"@every 1m 2m": expected "@every <duration>" or "with <duration> interval"`},
		{name: "with ... without interval", expr: "with 10m",
			want: `"with 10m": expected "@every <duration>" or "with <duration> interval"`},
		{name: "with ... intervals", expr: "with 10m intervals",
			want: `"with 10m intervals": expected "@every <duration>" or "with <duration> interval"`},
		{name: "with a bad duration", expr: "with ten interval",
			want: `interval "ten" is not a duration such as 90s, 10m or 1h30m`},

		// Time zones.
		{name: "an unknown zone after CRON_TZ=", expr: "CRON_TZ=Mars/Olympus 0 0 * * *",
			want: `CRON_TZ=Mars/Olympus: unknown time zone "Mars/Olympus"`},
		{name: "an unknown zone after TZ=", expr: "TZ=Nowhere 0 0 * * *", want: `TZ=Nowhere: unknown time zone "Nowhere"`},
		{name: "zone names are case-sensitive", expr: "TZ=europe/paris 0 0 * * *", want: `TZ=europe/paris: unknown time zone "europe/paris"`},
		{name: "a bare TZ=", expr: "TZ= 0 0 * * *", want: "TZ= needs a time zone name, e.g. TZ=Europe/Paris"},
		{name: "a bare CRON_TZ=", expr: "CRON_TZ= 0 0 * * *", want: "CRON_TZ= needs a time zone name, e.g. CRON_TZ=Europe/Paris"},
		{name: "TZ= alone", expr: "TZ=", want: "TZ= needs a time zone name, e.g. TZ=Europe/Paris"},
		{name: "a zone without a schedule", expr: "CRON_TZ=America/New_York", want: "missing schedule after CRON_TZ=America/New_York"},
		{name: "CRON_TZ=Local", expr: "CRON_TZ=Local 0 0 * * *",
			want: `CRON_TZ=Local: time zone "Local" depends on the machine; name an IANA zone such as Europe/Paris`},
		{name: "the Local zone in the options", expr: "0 0 * * *", opts: schedule.Options{Location: time.Local},
			want: `time zone "Local" depends on the machine; name an IANA zone such as Europe/Paris`},
		{name: "a prefix that disagrees with the options", expr: "CRON_TZ=Europe/Paris 0 0 * * *", opts: schedule.Options{Location: ny},
			want: "time zone given twice: CRON_TZ=Europe/Paris in the schedule and America/New_York"},
		{name: "UTC in the options and another zone in the prefix", expr: "TZ=Asia/Tokyo 0 0 * * *", opts: schedule.Options{Location: time.UTC},
			want: "time zone given twice: TZ=Asia/Tokyo in the schedule and UTC"},
		{name: "two prefixes", expr: "CRON_TZ=Europe/Paris TZ=Asia/Tokyo 0 0 * * *",
			want: "time zone given twice: CRON_TZ=Europe/Paris and TZ=Asia/Tokyo"},

		// Schedules that can never fire.
		{name: "30 February", expr: "0 0 30 2 *", want: `the schedule never fires: no date has day of month "30" in month "2"`},
		{name: "31 April and June", expr: "0 0 31 4,6 *", want: `the schedule never fires: no date has day of month "31" in month "4,6"`},
		{name: "31W in February", expr: "0 0 31W FEB *", want: `the schedule never fires: no date has day of month "31W" in month "FEB"`},
		{name: "L-29 in February", expr: "0 0 L-29 2 *", want: `the schedule never fires: no date has day of month "L-29" in month "2"`},
		{name: "a fifth Monday of February in a year without one", expr: "0 0 0 * 2 MON#5 2025",
			want: `the schedule never fires: no date has day of week "MON#5" in month "2" in year "2025"`},
		{name: "29 February in years that are not leap years", expr: "0 0 0 29 2 * 2025-2027",
			want: `the schedule never fires: no date has day of month "29" in month "2" in year "2025-2027"`},
		{name: "29 February 2100, which is not a leap year", expr: "0 0 0 29 2 * 2100",
			want: `the schedule never fires: no date has day of month "29" in month "2" in year "2100"`},
		{name: "either day field, neither possible", expr: "0 0 0 30 2 MON#5 2025",
			want: `the schedule never fires: no date has day of month "30" or day of week "MON#5" in month "2" in year "2025"`},
		{name: "both day fields, never together", expr: "0 0 */30 2 MON#5",
			want: `the schedule never fires: no date has day of month "*/30" and day of week "MON#5" in month "2"`},
		{name: "five fields ending in a year read as six fields with seconds first", expr: "0 0 * 2 MON#5 2025",
			want: `field 5 (month): "MON#5" is not a month name (JAN-DEC) or number 1-12`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := schedule.Parse(tc.expr, tc.opts)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded (%s), want error %q", tc.expr, s.Kind(), tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Parse(%q) error:\n got  %s\n want %s", tc.expr, got, tc.want)
			}
			if s != nil {
				t.Errorf("Parse(%q) returned a schedule with its error", tc.expr)
			}
			var perr *schedule.Error
			if !errors.As(err, &perr) {
				t.Errorf("Parse(%q) error is a %T, want *schedule.Error", tc.expr, err)
			}
		})
	}
}

// The Error fields let callers (config validation) point at the field.
func TestParseErrorNamesTheField(t *testing.T) {
	t.Parallel()
	_, err := schedule.Parse("0 0 0 32 * *", schedule.Options{})
	var perr *schedule.Error
	if !errors.As(err, &perr) {
		t.Fatalf("error %v is not a *schedule.Error", err)
	}
	if perr.Field != 4 || perr.Name != "day of month" || perr.Msg != "32 is out of range 1-31" {
		t.Errorf("Error = %+v, want field 4 (day of month), 32 is out of range 1-31", *perr)
	}
	_, err = schedule.Parse("0 0 30 2 *", schedule.Options{})
	if !errors.As(err, &perr) || perr.Field != 0 {
		t.Errorf("a never-fires error is about the whole expression, got %+v", err)
	}
}

// Schedules at the edges of what is allowed.
func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"0 0 29 2 *",
		"0 0 * 2 MON#5",
		"0 0 31 * *",
		"0 0 L-30 * *",
		"0 0 31W * *",
		"0 0 * * SUN#5",
		"59 59 23 31 12 * 2199",
		"0 0 0 1 1 * 1970",
		"*/59 */23 */30 */11 */6",
		"0 0 ? * ?",
		"0 0 * * 7L",
		"0 0 * * 7#1",
		"0 0 1-31/1 1-12/1 0-7",
		"@every 100000h",
		"with 1s interval",
		"triggered",
		"TZ=UTC triggered",
		"  triggered  ",
		"CRON_TZ=UTC   0 0 * * *",
		"TZ=Etc/GMT+12 0 0 * * *",
	} {
		if _, err := schedule.Parse(expr, schedule.Options{}); err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
		}
	}
}

func TestTriggered(t *testing.T) {
	t.Parallel()
	s := parseForTest(t, "triggered", schedule.Options{Location: mustZone(t, "Europe/Paris")})
	if s.Kind() != schedule.Triggered || s.Kind().String() != "triggered" {
		t.Errorf("Kind() = %v, want triggered", s.Kind())
	}
	from := mustInstant(t, jan1)
	if got, ok := s.Next(from); ok {
		t.Errorf("Next = %v, true; a triggered schedule never fires by itself", got)
	}
	if got, ok := s.Prev(from); ok {
		t.Errorf("Prev = %v, true; a triggered schedule never fires by itself", got)
	}
	if s.Interval() != 0 {
		t.Errorf("Interval() = %v, want 0", s.Interval())
	}
	if s.String() != "triggered" || s.Location().String() != "Europe/Paris" {
		t.Errorf("String() = %q, Location() = %v", s.String(), s.Location())
	}
}

func TestKindStrings(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{"@daily": "cron", "@every 1m": "interval", "triggered": "triggered"} {
		if got := parseForTest(t, expr, schedule.Options{}).Kind().String(); got != want {
			t.Errorf("Parse(%q).Kind() = %s, want %s", expr, got, want)
		}
	}
}

func TestParseKeepsTheExpressionAndZone(t *testing.T) {
	t.Parallel()
	s := parseForTest(t, "CRON_TZ=Asia/Kathmandu  0 0 * * *", schedule.Options{})
	if s.String() != "CRON_TZ=Asia/Kathmandu  0 0 * * *" {
		t.Errorf("String() = %q, want the expression as written", s.String())
	}
	if s.Location().String() != "Asia/Kathmandu" {
		t.Errorf("Location() = %v", s.Location())
	}
	if got := parseForTest(t, "0 0 * * *", schedule.Options{}).Location(); got != time.UTC {
		t.Errorf("no zone: Location() = %v, want UTC", got)
	}
}

func TestParseGapAndRepeat(t *testing.T) {
	t.Parallel()
	gaps := []struct {
		in   string
		want schedule.Gap
		str  string
	}{
		{"", schedule.GapDefault, "default"},
		{"shift", schedule.GapShift, "shift"},
		{"skip", schedule.GapSkip, "skip"},
	}
	for _, tc := range gaps {
		got, err := schedule.ParseGap(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseGap(%q) = %v (%s), %v; want %v (%s)", tc.in, got, got, err, tc.want, tc.str)
		}
	}
	repeats := []struct {
		in   string
		want schedule.Repeat
		str  string
	}{
		{"", schedule.RepeatDefault, "default"},
		{"first", schedule.RepeatFirst, "first"},
		{"last", schedule.RepeatLast, "last"},
		{"both", schedule.RepeatBoth, "both"},
	}
	for _, tc := range repeats {
		got, err := schedule.ParseRepeat(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseRepeat(%q) = %v (%s), %v; want %v (%s)", tc.in, got, got, err, tc.want, tc.str)
		}
	}
	for in, want := range map[string]string{
		"Skip":  `dst gap "Skip": expected skip or shift`,
		"first": `dst gap "first": expected skip or shift`,
		" skip": `dst gap " skip": expected skip or shift`,
	} {
		if _, err := schedule.ParseGap(in); err == nil || err.Error() != want {
			t.Errorf("ParseGap(%q) error = %v, want %s", in, err, want)
		}
	}
	for in, want := range map[string]string{
		"twice": `dst repeat "twice": expected first, last or both`,
		"FIRST": `dst repeat "FIRST": expected first, last or both`,
		"skip":  `dst repeat "skip": expected first, last or both`,
	} {
		if _, err := schedule.ParseRepeat(in); err == nil || err.Error() != want {
			t.Errorf("ParseRepeat(%q) error = %v, want %s", in, err, want)
		}
	}
}

// hashedMinutes returns the minutes of the hour at which s fires in the
// hour starting at from.
func hashedMinutes(t *testing.T, s *schedule.Schedule, from time.Time) []int {
	t.Helper()
	var mins []int
	for at := range s.Between(from, from.Add(time.Hour)) {
		mins = append(mins, at.Minute())
	}
	return mins
}

// The values H gives are persisted in effect: they decide when users' jobs
// run. These goldens must never change; if one does, every hashed job in
// every deployment moves.
func TestHashGoldens(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		expr  string
		jobID string
		from  string
		want  []string
	}{
		{name: "H H for sundial/nightly-backup is 01:09", expr: "H H * * *", jobID: "sundial/nightly-backup", from: jan1,
			want: []string{"2026-01-01T01:09:00Z", "2026-01-02T01:09:00Z"}},
		{name: "H H for sundial/report is 14:35", expr: "H H * * *", jobID: "sundial/report", from: jan1,
			want: []string{"2026-01-01T14:35:00Z", "2026-01-02T14:35:00Z"}},
		{name: "H H for billing/invoices is 14:36", expr: "H H * * *", jobID: "billing/invoices", from: jan1,
			want: []string{"2026-01-01T14:36:00Z", "2026-01-02T14:36:00Z"}},
		{name: "H(0-29) for billing/invoices is minute 6", expr: "H(0-29) * * * *", jobID: "billing/invoices", from: jan1,
			want: []string{"2026-01-01T00:06:00Z", "2026-01-01T01:06:00Z"}},
		{name: "H/15 for sundial/nightly-backup is 9, 24, 39, 54", expr: "H/15 * * * *", jobID: "sundial/nightly-backup", from: jan1,
			want: []string{"2026-01-01T00:09:00Z", "2026-01-01T00:24:00Z", "2026-01-01T00:39:00Z", "2026-01-01T00:54:00Z", "2026-01-01T01:09:00Z"}},
		{name: "H(0-29)/10 for sundial/report is 5, 15, 25", expr: "H(0-29)/10 * * * *", jobID: "sundial/report", from: jan1,
			want: []string{"2026-01-01T00:05:00Z", "2026-01-01T00:15:00Z", "2026-01-01T00:25:00Z", "2026-01-01T01:05:00Z"}},
		{name: "H in day of month for sundial/nightly-backup is the 17th", expr: "0 0 H * *", jobID: "sundial/nightly-backup", from: jan1,
			want: []string{"2026-01-17T00:00:00Z", "2026-02-17T00:00:00Z"}},
		{name: "H in day of week for billing/invoices is Saturday", expr: "0 0 * * H", jobID: "billing/invoices", from: jan1,
			want: []string{"2026-01-03T00:00:00Z", "2026-01-10T00:00:00Z"}},
		{name: "H in seconds for sundial/nightly-backup is second 42", expr: "H 0 0 * * *", jobID: "sundial/nightly-backup", from: jan1,
			want: []string{"2026-01-01T00:00:42Z", "2026-01-02T00:00:42Z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parseForTest(t, tc.expr, schedule.Options{JobID: tc.jobID})
			if got, _ := nextChain(s, mustInstant(t, tc.from), len(tc.want)); !equalStrings(got, tc.want) {
				t.Errorf("%q for %s:\n got  %q\n want %q", tc.expr, tc.jobID, got, tc.want)
			}
		})
	}
}

func TestHashIsStablePerJobID(t *testing.T) {
	t.Parallel()
	from := mustInstant(t, jan1)
	for _, expr := range []string{"H H * * *", "H(0-29)/10 H * * *", "H H H * H", "H H * * * *"} {
		a := parseForTest(t, expr, schedule.Options{JobID: "proj/job"})
		b := parseForTest(t, expr, schedule.Options{JobID: "proj/job"})
		ga, _ := nextChain(a, from, 5)
		gb, _ := nextChain(b, from, 5)
		if !equalStrings(ga, gb) {
			t.Errorf("%q: two parses with one job id differ:\n %q\n %q", expr, ga, gb)
		}
	}
}

// 6,000 jobs written "H * * * *" spread over the 60 minutes of the hour: about
// 100 per minute. The bound is loose enough never to flake for a fixed set of
// ids (they are fixed, so this is deterministic) and tight enough to catch a
// hash that clusters.
func TestHashSpreadsJobsEvenly(t *testing.T) {
	t.Parallel()
	from := mustInstant(t, jan1)
	check := func(t *testing.T, expr string, lo, hi, ids int, want map[int]bool) {
		t.Helper()
		counts := map[int]int{}
		for i := range ids {
			s := parseForTest(t, expr, schedule.Options{JobID: fmt.Sprintf("proj/job-%d", i)})
			mins := hashedMinutes(t, s, from)
			if len(mins) == 0 {
				t.Fatalf("%q for job %d does not fire in an hour", expr, i)
			}
			counts[mins[0]]++
		}
		for v, n := range counts {
			if !want[v] {
				t.Errorf("%q: %d jobs start at minute %d, outside the allowed values", expr, n, v)
			}
		}
		for v := range want {
			if n := counts[v]; n < lo || n > hi {
				t.Errorf("%q: %d of %d jobs start at minute %d, want %d-%d", expr, n, ids, v, lo, hi)
			}
		}
	}
	values := func(lo, hi int) map[int]bool {
		m := map[int]bool{}
		for v := lo; v <= hi; v++ {
			m[v] = true
		}
		return m
	}
	t.Run("H over 60 minutes", func(t *testing.T) {
		t.Parallel()
		check(t, "H * * * *", 65, 135, 6000, values(0, 59))
	})
	t.Run("H(0-29) over 30 minutes", func(t *testing.T) {
		t.Parallel()
		check(t, "H(0-29) * * * *", 65, 135, 3000, values(0, 29))
	})
	t.Run("H/15 starts in the first 15 minutes", func(t *testing.T) {
		t.Parallel()
		check(t, "H/15 * * * *", 65, 135, 1500, values(0, 14))
	})
	t.Run("H(0-29)/10 starts in the first 10 minutes", func(t *testing.T) {
		t.Parallel()
		check(t, "H(0-29)/10 * * * *", 65, 135, 1000, values(0, 9))
	})
}

// H/n and H(a-b)/n fire every n minutes from the hashed start, inside the range.
func TestHashStepsStayInRange(t *testing.T) {
	t.Parallel()
	from := mustInstant(t, jan1)
	for i := range 200 {
		id := fmt.Sprintf("proj/job-%d", i)
		mins := hashedMinutes(t, parseForTest(t, "H/15 * * * *", schedule.Options{JobID: id}), from)
		if len(mins) != 4 || mins[0] >= 15 || mins[1] != mins[0]+15 || mins[2] != mins[0]+30 || mins[3] != mins[0]+45 {
			t.Errorf("H/15 for %s fires at %v", id, mins)
		}
		mins = hashedMinutes(t, parseForTest(t, "H(0-29)/10 * * * *", schedule.Options{JobID: id}), from)
		if len(mins) != 3 || mins[0] >= 10 || mins[1] != mins[0]+10 || mins[2] != mins[0]+20 {
			t.Errorf("H(0-29)/10 for %s fires at %v", id, mins)
		}
		mins = hashedMinutes(t, parseForTest(t, "H(40-44) * * * *", schedule.Options{JobID: id}), from)
		if len(mins) != 1 || mins[0] < 40 || mins[0] > 44 {
			t.Errorf("H(40-44) for %s fires at %v", id, mins)
		}
	}
	// A hashed day of month is one that every month has.
	for i := range 500 {
		s := parseForTest(t, "0 0 H * *", schedule.Options{JobID: fmt.Sprintf("proj/job-%d", i)})
		if next, ok := s.Next(mustInstant(t, "2026-01-31T00:00:00Z")); !ok || next.Month() != time.February {
			t.Errorf("H in day of month for job %d skips February: %v", i, next)
		}
	}
}

// The minute and hour of "H H * * *" are hashed separately: the hour is not
// the minute modulo 24.
func TestHashFieldsAreIndependent(t *testing.T) {
	t.Parallel()
	from := mustInstant(t, jan1)
	same := 0
	for i := range 240 {
		s := parseForTest(t, "H H * * *", schedule.Options{JobID: fmt.Sprintf("proj/job-%d", i)})
		next, _ := s.Next(from.Add(-time.Second))
		if next.Hour() == next.Minute()%24 {
			same++
		}
	}
	if same > 30 { // about 10 expected by chance
		t.Errorf("%d of 240 jobs have hour == minute %% 24; the fields are not hashed separately", same)
	}
}
