package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
)

// holidaysICS is a small export of a holiday calendar: one day, a range
// of days by DTEND, one by DURATION, and one cancelled.
const holidaysICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261225\r\nSUMMARY:Christmas\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:2\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261228\r\nDTEND;VALUE=DATE:20261231\r\nSUMMARY:Closed\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:3\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20270101\r\nDURATION:P1D\r\nSUMMARY:New\r\n  Year\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:4\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260704\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// writeProject writes a config and the .ics files beside it, and parses
// the config as the directory source reads it.
func writeProject(t *testing.T, yaml string, ics map[string]string, shared *config.SharedCalendars) (string, *config.Project, error) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range ics {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "billing.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := config.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := files[0]
	p, err := config.ParseWith(f.Path, f.Data, allTargets(), config.Calendars{ICS: f.ICS, Shared: shared})
	return dir, p, err
}

const calendarsYAML = `calendars:
  - name: business-days
    weekdays: [mon-fri]
  - name: holidays
    time_zone: America/New_York
    dates: [2026-11-26, "2026-12-24..2026-12-26"]
    ics: holidays.ics
jobs:
  - id: report
    schedule: "30 9 * * *"
    time_zone: Europe/London
    only_calendars: [business-days]
    skip_calendars: [holidays]
    active: {from: 2026-01-05, until: "2026-12-31T17:00:00Z"}
    max_runs: 200
    noop: {}
`

// A job's calendars, window and cap reach its definition, the .ics file's
// days merged with the calendar's own dates.
func TestCalendarsReachTheDefinition(t *testing.T) {
	t.Parallel()
	_, p, err := writeProject(t, calendarsYAML, map[string]string{"holidays.ics": holidaysICS}, nil)
	if err != nil {
		t.Fatal(err)
	}
	def := p.Jobs[0].Definition
	if got := def.Active; got != (engine.Window{From: "2026-01-05", Until: "2026-12-31T17:00:00Z"}) {
		t.Errorf("Active = %+v", got)
	}
	if def.Policy.MaxRuns != 200 {
		t.Errorf("MaxRuns = %d", def.Policy.MaxRuns)
	}
	if len(def.OnlyCalendars) != 1 || def.OnlyCalendars[0].String() != "business-days (Monday through Friday)" {
		t.Errorf("OnlyCalendars = %v", def.OnlyCalendars)
	}
	if len(def.SkipCalendars) != 1 || def.SkipCalendars[0].String() != "holidays (8 dates from 2026-11-26 to 2027-01-01, America/New_York)" {
		t.Errorf("SkipCalendars = %v", def.SkipCalendars)
	}
	s, err := def.Parse(p.Jobs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	london, _ := time.LoadLocation("Europe/London")
	// Thursday 24 December is a holiday, then a weekend, then the
	// 28th-30th closed, the 31st after 17:00 UTC... and 09:30 London is
	// before it: the last occurrence.
	next, _ := s.Next(time.Date(2026, 12, 23, 10, 0, 0, 0, london))
	if want := time.Date(2026, 12, 31, 9, 30, 0, 0, london); !next.Equal(want) {
		t.Errorf("after the 23rd, Next = %s, want %s", next, want)
	}
	if after, ok := s.Next(next); ok {
		t.Errorf("past the window, Next = %s", after)
	}
}

// Every mistake in calendars is reported at its file, line and field;
// an .ics file's at its own file and line.
func TestCalendarErrors(t *testing.T) {
	t.Parallel()
	const noop = "    noop: {}\n"
	for _, tc := range []struct {
		name, yaml string
		ics        map[string]string
		want       string // the error, after the directory
	}{
		{"a job naming no such calendar", "jobs:\n  - id: a\n    schedule: \"0 9 * * *\"\n    skip_calendars: [holidays]\n" + noop,
			nil, `billing.yaml:4: jobs[0].skip_calendars[0]: "holidays": no such calendar (want one of none: define them under calendars)`},
		{"a calendar without days", "calendars:\n  - name: empty\njobs: []\n",
			nil, "billing.yaml:2: calendars[0]: calendar empty has no days: want weekdays, dates or ics"},
		{"a calendar named twice", "calendars:\n  - name: a\n    weekdays: [sat]\n  - name: a\n    weekdays: [sun]\njobs: []\n",
			nil, `billing.yaml:4: calendars[1].name: "a" is used twice (first at line 2)`},
		{"a bad weekday", "calendars:\n  - name: a\n    weekdays: [mon-fry]\njobs: []\n",
			nil, `billing.yaml:3: calendars[0].weekdays[0]: "mon-fry": want a weekday (mon, tue, ... sun) or a range of them (mon-fri)`},
		{"a bad date", "calendars:\n  - name: a\n    dates: [2026-02-30]\njobs: []\n",
			nil, `billing.yaml:3: calendars[0].dates[0]: "2026-02-30": want a date (2026-12-25) or a range of dates (2026-12-24..2026-12-31)`},
		{"a range backwards", "calendars:\n  - name: a\n    dates: [\"2026-12-31..2026-12-01\"]\njobs: []\n",
			nil, `billing.yaml:3: calendars[0].dates[0]: 2026-12-31 to 2026-12-01: the range ends before it starts`},
		{"an unknown zone", "calendars:\n  - name: a\n    time_zone: Mars/Olympus\n    weekdays: [sat]\njobs: []\n",
			nil, `billing.yaml:3: calendars[0].time_zone: `},
		{"an ics file that is not there", "calendars:\n  - name: a\n    ics: holidays.ics\njobs: []\n",
			nil, `billing.yaml:3: calendars[0].ics: holidays.ics: no such file beside billing.yaml`},
		{"an ics path outside the directory", "calendars:\n  - name: a\n    ics: ../secrets/x.ics\njobs: []\n",
			nil, `billing.yaml:3: calendars[0].ics: "../secrets/x.ics": want the name of an .ics file beside the config file, such as holidays.ics`},
		{"an ics event at a time of day", "calendars:\n  - name: a\n    ics: h.ics\njobs: []\n",
			map[string]string{"h.ics": strings.Replace(holidaysICS, "DTSTART;VALUE=DATE:20261225", "DTSTART:20261225T090000Z", 1)},
			`h.ics:7: VEVENT[0].DTSTART: "20261225T090000Z" is not a date: a calendar takes all-day events (DTSTART;VALUE=DATE:20261225)`},
		{"a recurring ics event", "calendars:\n  - name: a\n    ics: h.ics\njobs: []\n",
			map[string]string{"h.ics": strings.Replace(holidaysICS, "SUMMARY:Christmas", "RRULE:FREQ=YEARLY", 1)},
			`h.ics:8: VEVENT[0].RRULE: a recurring event: list each of its dates as an event of its own, or under the calendar's dates`},
		{"an ics DTEND before DTSTART", "calendars:\n  - name: a\n    ics: h.ics\njobs: []\n",
			map[string]string{"h.ics": strings.Replace(holidaysICS, "DTEND;VALUE=DATE:20261231", "DTEND;VALUE=DATE:20261228", 1)},
			`h.ics:14: VEVENT[1].DTEND: 2026-12-28 is not after DTSTART 2026-12-28: DTEND is the day after the event's last`},
		{"a file that is not iCalendar", "calendars:\n  - name: a\n    ics: h.ics\njobs: []\n",
			map[string]string{"h.ics": "jobs: []\n"}, `h.ics: not an iCalendar file: want BEGIN:VCALENDAR at its start`},
		{"calendars on an interval", "calendars:\n  - name: a\n    weekdays: [sat]\njobs:\n  - id: a\n    schedule: \"@every 10m\"\n    skip_calendars: [a]\n" + noop,
			nil, `billing.yaml:7: jobs[0].skip_calendars: calendars remove fire times of a cron schedule; interval schedule "@every 10m" has none`},
		{"a window that ends before it starts", "jobs:\n  - id: a\n    schedule: \"0 9 * * *\"\n    active: {from: 2026-03-01, until: 2026-02-01}\n" + noop,
			nil, `billing.yaml:4: jobs[0].active.until: 2026-02-01 is before from 2026-03-01`},
		{"a window bound that is no time", "jobs:\n  - id: a\n    schedule: \"0 9 * * *\"\n    active: {from: soon}\n" + noop,
			nil, `billing.yaml:4: jobs[0].active.from: "soon" is neither a date (2026-01-31) nor an RFC 3339 time`},
		{"a window on a triggered job", "jobs:\n  - id: a\n    schedule: triggered\n    active: {until: 2026-02-01}\n" + noop,
			nil, `billing.yaml:4: jobs[0].active: a triggered schedule has no fire times for an active window to bound`},
		{"a cap of zero", "jobs:\n  - id: a\n    schedule: \"0 9 * * *\"\n    max_runs: 0\n" + noop,
			nil, `billing.yaml:4: jobs[0].max_runs: want at least 1; leave it out for no cap`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, p, err := writeProject(t, tc.yaml, tc.ics, nil)
			if err == nil {
				t.Fatalf("parsed %+v, want an error", p)
			}
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %v (%T), want config.Errors", err, err)
			}
			want := filepath.Join(dir, tc.want)
			for _, e := range es {
				if strings.HasPrefix(e.Error(), want) {
					return
				}
			}
			t.Errorf("errors:\n%v\nwant one starting %q", err, want)
		})
	}
}

// The operator's calendars: a directory of .ics files, each named by its
// file, or a YAML file as a project's calendars; a project may name them,
// and may not define one of the same name.
func TestSharedCalendars(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "us-holidays.ics"), []byte(holidaysICS), 0o644); err != nil {
		t.Fatal(err)
	}
	shared, err := config.LoadCalendars(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := writeProject(t, "jobs:\n  - id: a\n    schedule: \"0 9 * * *\"\n    skip_calendars: [us-holidays]\n    noop: {}\n", nil, shared)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Jobs[0].Definition.SkipCalendars[0].String(); got != "us-holidays (5 dates from 2026-12-25 to 2027-01-01)" {
		t.Errorf("the shared calendar reads %q", got)
	}
	_, _, err = writeProject(t, "calendars:\n  - name: us-holidays\n    weekdays: [sun]\njobs: []\n", nil, shared)
	if err == nil || !strings.Contains(err.Error(), `calendars[0].name: "us-holidays" is a calendar the server shares with every project`) {
		t.Errorf("a project's calendar shadowing a shared one: %v", err)
	}

	file := filepath.Join(dir, "calendars.yaml")
	if err := os.WriteFile(file, []byte("calendars:\n  - name: weekend\n    weekdays: [sat, sun]\n  - name: bad\n    dates: [2026-13-01]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.LoadCalendars(file); err == nil || !strings.Contains(err.Error(), file+`:5: calendars[1].dates[0]: "2026-13-01"`) {
		t.Errorf("LoadCalendars of a bad file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.ics"), []byte("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260101T100000\nEND:VEVENT\nEND:VCALENDAR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.LoadCalendars(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "bad.ics")+`:3: VEVENT[0].DTSTART`) {
		t.Errorf("LoadCalendars of a directory with a bad file: %v", err)
	}
}

// A change to an .ics file beside a config applies the project again,
// though the config's bytes are the same.
func TestAnICSChangeAppliesTheProjectAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("billing.yaml", calendarsYAML)
	e.write("holidays.ics", holidaysICS)
	e.refresh()
	before := e.definition("billing/report")
	e.write("holidays.ics", strings.Replace(holidaysICS, "20261225", "20261201", 1))
	e.refresh()
	after := e.definition("billing/report")
	if before.SkipCalendars[0].Equal(after.SkipCalendars[0]) {
		t.Errorf("the holidays are still %s after the .ics file changed", after.SkipCalendars[0])
	}
}

// The operator's shared calendars are read again at each refresh: a
// change applies the projects that name them without a restart, and
// calendars that no longer read are refused with their file and line
// while the last good ones keep running.
func TestSharedCalendarsAreReadAgainAtEachRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shared := t.TempDir()
	writeICS := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(shared, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeICS("us-holidays.ics", holidaysICS)
	cals, err := config.LoadCalendars(shared)
	if err != nil {
		t.Fatal(err)
	}
	e.fresh = config.NewRefresher(e.dir, e.eng, e.st, config.RefresherOptions{Targets: e.tgts, Now: e.clock, Calendars: cals, CalendarsPath: shared})
	e.write("billing.yaml", "jobs:\n  - id: report\n    schedule: \"0 9 * * *\"\n    skip_calendars: [us-holidays]\n    noop: {}\n")
	holidays := func() string {
		t.Helper()
		return e.definition("billing/report").SkipCalendars[0].String()
	}
	e.refresh()
	if got, want := holidays(), "us-holidays (5 dates from 2026-12-25 to 2027-01-01)"; got != want {
		t.Fatalf("at start the job skips %s, want %s", got, want)
	}

	writeICS("us-holidays.ics", strings.Replace(holidaysICS, "20261225", "20261201", 1))
	e.refresh()
	changed := "us-holidays (5 dates from 2026-12-01 to 2027-01-01)"
	if got := holidays(); got != changed {
		t.Errorf("after the shared .ics file changed the job skips %s, want %s", got, changed)
	}

	bad := filepath.Join(shared, "bad.ics")
	writeICS("bad.ics", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260101T100000\nEND:VEVENT\nEND:VCALENDAR\n")
	writeICS("us-holidays.ics", holidaysICS)
	if err := e.fresh.Refresh(e.ctx); err == nil || !strings.Contains(err.Error(), bad+":3: VEVENT[0].DTSTART") {
		t.Errorf("a refresh with a bad shared calendar: %v, want the file, line and field refused", err)
	}
	if got := holidays(); got != changed {
		t.Errorf("after a bad shared calendar the job skips %s, want the last good %s", got, changed)
	}
	if st := e.status("billing"); st.Error != "" {
		t.Errorf("the project's record reads %q; the server's calendars are at fault, not its config", st.Error)
	}

	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	e.refresh()
	if got, want := holidays(), "us-holidays (5 dates from 2026-12-25 to 2027-01-01)"; got != want {
		t.Errorf("once the bad file is gone the job skips %s, want %s", got, want)
	}
}
