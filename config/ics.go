package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/sundial-cron/sundial/schedule"
)

// readICS reads the days of an iCalendar file (RFC 5545): the all-day
// events of its VEVENTs, each from DTSTART to the day before DTEND (or
// for its DURATION of days and weeks; one day without either). A
// cancelled event is no day. What a calendar of days cannot hold is an
// error at its line rather than a guess: an event at a time of day (its
// date depends on a zone the file may not name), or a recurring one
// (RRULE, RDATE, EXDATE), whose dates a person can list instead. path
// names the file in errors.
func readICS(path string, data []byte) ([]schedule.DateRange, Errors) {
	lines := icsLines(data)
	fail := func(line int, field, format string, args ...any) Errors {
		return Errors{{File: path, Line: line, Field: field, Msg: clip(fmt.Sprintf(format, args...), maxErrMsg)}}
	}
	if !bytes.Contains(bytes.ToUpper(data[:min(len(data), 1024)]), []byte("BEGIN:VCALENDAR")) {
		return nil, fail(0, "", "not an iCalendar file: want BEGIN:VCALENDAR at its start (an .ics calendar export)")
	}
	// Some exports put properties between events, which RFC 5545 does
	// not allow and which say nothing of the days: taken, not refused.
	cal, err := ics.ParseCalendarWithOptions(bytes.NewReader(data), ics.WithUnknownPropertyHandler(ics.AcceptUnknownPropertyHandler))
	if err != nil {
		line := 0
		if m := icsParseLine.FindStringSubmatch(err.Error()); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n < len(lines) {
				line = lines[n].line
			}
		}
		return nil, fail(line, "", "not a valid iCalendar file: %v", err)
	}
	begins := icsEventLines(lines)
	var out []schedule.DateRange
	var errs Errors
	for i, ev := range cal.Events() {
		field := fmt.Sprintf("VEVENT[%d]", i)
		at := func(prop string) int {
			if i >= len(begins) {
				return 0
			}
			for _, l := range lines[begins[i]:] {
				name := strings.ToUpper(l.text)
				if strings.HasPrefix(name, "END:VEVENT") {
					break
				}
				if strings.HasPrefix(name, prop+":") || strings.HasPrefix(name, prop+";") {
					return l.line
				}
			}
			return lines[begins[i]].line
		}
		if p := ev.GetProperty(ics.ComponentPropertyStatus); p != nil && strings.EqualFold(p.Value, "CANCELLED") {
			continue
		}
		for _, prop := range []ics.ComponentProperty{ics.ComponentPropertyRrule, ics.ComponentPropertyRdate, ics.ComponentPropertyExdate} {
			if ev.GetProperty(prop) != nil {
				errs = append(errs, fail(at(string(prop)), field+"."+string(prop), "a recurring event: list each of its dates as an event of its own, or under the calendar's dates")...)
			}
		}
		start := ev.GetProperty(ics.ComponentPropertyDtStart)
		if start == nil {
			errs = append(errs, fail(at("BEGIN"), field+".DTSTART", "missing: want the event's first day, DTSTART;VALUE=DATE:20261225")...)
			continue
		}
		first, ok := icsDate(start.Value)
		if !ok {
			errs = append(errs, fail(at("DTSTART"), field+".DTSTART", "%q is not a date: a calendar takes all-day events (DTSTART;VALUE=DATE:20261225), whose days do not depend on a time zone", clip(start.Value, maxQuoted))...)
			continue
		}
		last := first
		switch end, dur := ev.GetProperty(ics.ComponentPropertyDtEnd), ev.GetProperty(ics.ComponentPropertyDuration); {
		case end != nil:
			e, ok := icsDate(end.Value)
			if !ok {
				errs = append(errs, fail(at("DTEND"), field+".DTEND", "%q is not a date: want the day after the event's last, DTEND;VALUE=DATE:20261226", clip(end.Value, maxQuoted))...)
				continue
			}
			if !e.After(first) {
				errs = append(errs, fail(at("DTEND"), field+".DTEND", "%s is not after DTSTART %s: DTEND is the day after the event's last", e.Format(time.DateOnly), first.Format(time.DateOnly))...)
				continue
			}
			last = e.AddDate(0, 0, -1)
		case dur != nil:
			days, ok := icsDays(dur.Value)
			if !ok {
				errs = append(errs, fail(at("DURATION"), field+".DURATION", "%q: want whole days or weeks, such as P1D or P2W", clip(dur.Value, maxQuoted))...)
				continue
			}
			last = first.AddDate(0, 0, days-1)
		}
		out = append(out, schedule.DateRange{First: schedule.DateOf(first), Last: schedule.DateOf(last)})
	}
	return out, errs
}

// icsParseLine finds the line the parser gave up at, counted in unfolded
// lines from 0.
var icsParseLine = regexp.MustCompile(`parsing (?:calendar )?line (\d+)`)

// icsLine is one unfolded content line and the file line it starts at.
type icsLine struct {
	text string
	line int
}

// icsLines unfolds the file's content lines (a line that starts with a
// space or a tab goes on the one before), keeping where each starts.
func icsLines(data []byte) []icsLine {
	var out []icsLine
	for i, raw := range strings.Split(string(data), "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		if n := len(out); n > 0 && raw != "" && (raw[0] == ' ' || raw[0] == '\t') {
			out[n-1].text += raw[1:]
			continue
		}
		out = append(out, icsLine{text: raw, line: i + 1})
	}
	return out
}

// icsEventLines returns the index in lines of each BEGIN:VEVENT, in order.
func icsEventLines(lines []icsLine) []int {
	var out []int
	for i, l := range lines {
		if strings.EqualFold(strings.TrimSpace(l.text), "BEGIN:VEVENT") {
			out = append(out, i)
		}
	}
	return out
}

// icsDate reads a DATE value, YYYYMMDD.
func icsDate(v string) (time.Time, bool) {
	t, err := time.Parse("20060102", v)
	return t, err == nil
}

// icsDays reads a DURATION of whole days or weeks: P1D, P2W.
func icsDays(v string) (int, bool) {
	m := icsDuration.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 || n > 3660 {
		return 0, false
	}
	if m[2] == "W" {
		n *= 7
	}
	return n, true
}

var icsDuration = regexp.MustCompile(`^\+?P(\d+)([DW])$`)
