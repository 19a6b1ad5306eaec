package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/schedule"
)

// Calendars is what a project's calendars may draw on beyond its file:
// the iCalendar files beside it and the calendars the operator shares
// with every project.
type Calendars struct {
	// ICS are the .ics files in the config file's directory, by name.
	ICS map[string]ICSFile
	// Shared are the operator's calendars (serve --calendars), which
	// every project's jobs may name; nil for none.
	Shared *SharedCalendars
}

// ICSFile is an iCalendar file read from a config source: its bytes, or
// why it could not be read.
type ICSFile struct {
	Data []byte
	Err  error
}

// calendarFields are the fields of a calendar.
var calendarFields = []string{"name", "time_zone", "weekdays", "dates", "ics"}

// calendarName is what a calendar's name may be: a job's id's letters.
var calendarName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// calendarList reads a `calendars:` list: each a name and its days, from
// weekdays, dates and an .ics file beside the config, in one zone (the
// job's if it names none).
func (d *decoder) calendarList(n *yaml.Node, path string) map[string]*schedule.Calendar {
	out := map[string]*schedule.Calendar{}
	list := resolve(n)
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, path, "want a list of calendars, got %s", describe(list))
		return out
	}
	lines := map[string]int{}
	for i, item := range list.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		fs, ok := d.mapping(item, p, calendarFields...)
		if !ok {
			continue
		}
		f, ok := fs["name"]
		if !ok {
			d.errorf(item, p+".name", "missing: want the name jobs give in skip_calendars or only_calendars")
			continue
		}
		name, ok := d.str(f.value, p+".name")
		if !ok {
			continue
		}
		switch line, dup := lines[name]; {
		case !calendarName.MatchString(name):
			d.errorf(f.value, p+".name", "%q: want 1 to 100 of A-Z a-z 0-9 _ . -", clip(name, maxQuoted))
			continue
		case dup:
			d.errorf(f.value, p+".name", "%q is used twice (first at line %d)", name, line)
			continue
		case d.env.Shared.has(name):
			d.errorf(f.value, p+".name", "%q is a calendar the server shares with every project (%s): name this one otherwise", name, d.env.Shared.where(name))
			continue
		}
		lines[name] = f.value.Line
		if c, ok := d.calendar(name, item, fs, p, d.env.ICS, filepath.Dir(d.file)); ok {
			out[name] = c
		} else {
			d.badCalendars[name] = true
		}
	}
	return out
}

// calendar reads one calendar's days; ics names its .ics files, beside
// dir.
func (d *decoder) calendar(name string, n *yaml.Node, fs map[string]field, path string, files map[string]ICSFile, dir string) (*schedule.Calendar, bool) {
	before := d.failures()
	var loc *time.Location
	if f, ok := fs["time_zone"]; ok {
		if tz, ok := d.str(f.value, path+".time_zone"); ok {
			var err error
			if loc, err = schedule.LoadZone(tz); err != nil {
				d.errorf(f.value, path+".time_zone", "%v", err)
			}
		}
	}
	var weekdays []time.Weekday
	if f, ok := fs["weekdays"]; ok {
		weekdays = d.weekdays(f.value, path+".weekdays")
	}
	var ranges []schedule.DateRange
	if f, ok := fs["dates"]; ok {
		ranges = d.dates(f.value, path+".dates")
	}
	if f, ok := fs["ics"]; ok {
		ranges = append(ranges, d.icsFile(f.value, path+".ics", files, dir)...)
	}
	if _, w := fs["weekdays"]; !w && fs["dates"].value == nil && fs["ics"].value == nil {
		d.errorf(n, path, "calendar %s has no days: want weekdays, dates or ics", name)
	}
	if d.failures() > before {
		return nil, false
	}
	c, err := schedule.NewCalendar(name, loc, weekdays, ranges)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return nil, false
	}
	return c, true
}

// weekdays reads a list of weekdays and ranges of them: [mon-fri, sun].
func (d *decoder) weekdays(n *yaml.Node, path string) []time.Weekday {
	list := resolve(n)
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, path, "want a list of weekdays such as [mon-fri], got %s", describe(list))
		return nil
	}
	var out []time.Weekday
	for i, item := range list.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		s, ok := d.str(item, p)
		if !ok {
			continue
		}
		ws, ok := schedule.ParseWeekdays(s)
		if !ok {
			d.errorf(item, p, "%q: want a weekday (mon, tue, ... sun) or a range of them (mon-fri)", clip(s, maxQuoted))
			continue
		}
		out = append(out, ws...)
	}
	return out
}

// dates reads a list of dates and ranges of dates: [2026-12-25,
// 2026-12-24..2026-12-31].
func (d *decoder) dates(n *yaml.Node, path string) []schedule.DateRange {
	list := resolve(n)
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, path, "want a list of dates such as [2026-12-25, 2026-12-24..2026-12-31], got %s", describe(list))
		return nil
	}
	var out []schedule.DateRange
	for i, item := range list.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		s, ok := d.dateText(item, p)
		if !ok {
			continue
		}
		r, ok, err := schedule.ParseDateRange(s)
		if !ok {
			d.errorf(item, p, "%q: want a date (2026-12-25) or a range of dates (2026-12-24..2026-12-31)", clip(s, maxQuoted))
			continue
		}
		if err != nil {
			d.errorf(item, p, "%v", err)
			continue
		}
		out = append(out, r)
	}
	return out
}

// dateText reads a scalar that is a string or that YAML took for a
// timestamp, as it takes an unquoted 2026-12-25.
func (d *decoder) dateText(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!timestamp" {
		return n.Value, true
	}
	return d.str(n, path)
}

// icsFile reads the days of the .ics file a calendar names: a file in the
// directory of the config file, so that it comes from the same revision.
func (d *decoder) icsFile(n *yaml.Node, path string, files map[string]ICSFile, dir string) []schedule.DateRange {
	name, ok := d.str(n, path)
	if !ok {
		return nil
	}
	if !strings.HasSuffix(name, ".ics") || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		d.errorf(n, path, "%q: want the name of an .ics file beside the config file, such as holidays.ics", clip(name, maxQuoted))
		return nil
	}
	f, ok := files[name]
	switch {
	case !ok:
		d.errorf(n, path, "%s: no such file beside %s", name, filepath.Base(d.file))
		return nil
	case f.Err != nil:
		d.errorf(n, path, "%v", f.Err)
		return nil
	}
	ranges, errs := readICS(filepath.Join(dir, name), f.Data)
	for _, e := range errs {
		d.add(&Error{File: e.File, Line: e.Line, Field: e.Field}, "%s", e.Msg)
	}
	return ranges
}

// jobCalendars reads a job's skip_calendars or only_calendars: names of
// the project's calendars or the server's shared ones.
func (d *decoder) jobCalendars(n *yaml.Node, path string, project map[string]*schedule.Calendar) []*schedule.Calendar {
	list := resolve(n)
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, path, "want a list of calendar names, got %s", describe(list))
		return nil
	}
	var out []*schedule.Calendar
	seen := map[string]bool{}
	for i, item := range list.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		name, ok := d.str(item, p)
		if !ok {
			continue
		}
		c := project[name]
		if c == nil {
			c = d.env.Shared.get(name)
		}
		switch {
		case seen[name]:
			d.errorf(item, p, "%q is listed twice", clip(name, maxQuoted))
		case c == nil && d.badCalendars[name]:
			// Its own error is reported where it is defined.
		case c == nil:
			d.errorf(item, p, "%q: no such calendar (want one of %s)", clip(name, maxQuoted), strings.Join(d.calendarNames(project), ", "))
		default:
			out = append(out, c)
		}
		seen[name] = true
	}
	return out
}

// calendarNames lists the calendars a job may name, sorted.
func (d *decoder) calendarNames(project map[string]*schedule.Calendar) []string {
	var names []string
	for name := range project {
		names = append(names, name)
	}
	names = append(names, d.env.Shared.names()...)
	slices.Sort(names)
	if len(names) == 0 {
		return []string{"none: define them under calendars"}
	}
	return names
}

// active reads a job's active window: {from, until}, each a date or an
// RFC 3339 time.
func (d *decoder) active(n *yaml.Node, path string) (w struct{ From, Until string }, fromNode, untilNode *yaml.Node) {
	fs, ok := d.mapping(n, path, "from", "until")
	if !ok {
		return w, nil, nil
	}
	read := func(name string, end bool) (string, *yaml.Node) {
		f, ok := fs[name]
		if !ok {
			return "", nil
		}
		s, ok := d.dateText(f.value, path+"."+name)
		if !ok {
			return "", nil
		}
		if _, err := schedule.ParseBound(s, time.UTC, end); err != nil {
			d.errorf(f.value, path+"."+name, "%v", err)
			return "", nil
		}
		return s, f.value
	}
	w.From, fromNode = read("from", false)
	w.Until, untilNode = read("until", true)
	if len(fs) == 0 {
		d.errorf(n, path, "want from, until or both")
	}
	return w, fromNode, untilNode
}
