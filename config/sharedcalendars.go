package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sundial-cron/sundial/schedule"
)

// SharedCalendars are the calendars an operator shares with every project
// (serve --calendars): read at start, and again at each refresh
// (RefresherOptions.CalendarsPath), from a directory of .ics
// files, each a calendar named by its file, or from a YAML file with a
// `calendars:` list as a project config has. A nil *SharedCalendars has
// none.
type SharedCalendars struct {
	byName map[string]*schedule.Calendar
	from   map[string]string // the file that defines each
	digest string
}

// LoadCalendars reads the shared calendars at path, a directory or a YAML
// file. Errors name the file, line and field, as a config's do.
func LoadCalendars(path string) (*SharedCalendars, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	s := &SharedCalendars{byName: map[string]*schedule.Calendar{}, from: map[string]string{}}
	h := sha256.New()
	if info.IsDir() {
		files, err := ReadICSDir(path)
		if err != nil {
			return nil, err
		}
		var errs Errors
		for _, name := range slices.Sorted(maps.Keys(files)) {
			f, file := files[name], filepath.Join(path, name)
			if f.Err != nil {
				errs = append(errs, &Error{File: file, Msg: f.Err.Error()})
				continue
			}
			cal := strings.TrimSuffix(name, ".ics")
			if !calendarName.MatchString(cal) {
				errs = append(errs, &Error{File: file, Msg: fmt.Sprintf("%q is not a calendar name (the file's, without .ics): want 1 to 100 of A-Z a-z 0-9 _ . -", cal)})
				continue
			}
			ranges, rerrs := readICS(file, f.Data)
			if len(rerrs) > 0 {
				errs = append(errs, rerrs...)
				continue
			}
			c, err := schedule.NewCalendar(cal, nil, nil, ranges)
			if err != nil {
				errs = append(errs, &Error{File: file, Msg: err.Error()})
				continue
			}
			s.byName[cal], s.from[cal] = c, file
			fmt.Fprintf(h, "%s %d\n", name, len(f.Data))
			h.Write(f.Data)
		}
		if len(errs) > 0 {
			return nil, errs
		}
		s.digest = hex.EncodeToString(h.Sum(nil))
		return s, nil
	}
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	files, err := ReadICSDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	d := &decoder{file: path, env: Calendars{ICS: files}, badCalendars: map[string]bool{}}
	if root := d.document(data); root != nil {
		if fs, ok := d.mapping(root, "", "calendars"); ok {
			if f, ok := fs["calendars"]; ok {
				s.byName = d.calendarList(f.value, "calendars")
			} else {
				d.errorf(root, "calendars", "missing: want a list of calendars")
			}
		}
	}
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	h.Write(data)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s %d\n", name, len(files[name].Data))
		h.Write(files[name].Data)
	}
	for name := range s.byName {
		s.from[name] = path
	}
	s.digest = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// Digest names what the calendars hold: it changes when any of their
// files does.
func (s *SharedCalendars) Digest() string {
	if s == nil {
		return ""
	}
	return s.digest
}

// names lists the calendars, sorted.
func (s *SharedCalendars) names() []string {
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.byName))
}

// Len is how many calendars there are.
func (s *SharedCalendars) Len() int {
	if s == nil {
		return 0
	}
	return len(s.byName)
}

func (s *SharedCalendars) has(name string) bool { return s.get(name) != nil }

func (s *SharedCalendars) get(name string) *schedule.Calendar {
	if s == nil {
		return nil
	}
	return s.byName[name]
}

func (s *SharedCalendars) where(name string) string {
	if s == nil {
		return ""
	}
	return s.from[name]
}

// ReadICSDir reads the .ics files directly in dir, by name, as ReadFile
// reads a config: one that cannot be read has Err set, and holds up only
// the calendars that name it.
func ReadICSDir(dir string) (map[string]ICSFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]ICSFile{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".ics") || e.Name()[0] == '.' || e.IsDir() {
			continue
		}
		data, err := ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = ICSFile{Data: data, Err: err}
	}
	return out, nil
}

// calendarRevision is the revision of a config file that draws on
// calendars: its bytes, the .ics files beside it and the shared
// calendars, so that a change to any of them applies the project again.
// A file with neither keeps the revision of its bytes alone.
func calendarRevision(data []byte, files map[string]ICSFile, shared *SharedCalendars) string {
	if len(files) == 0 && shared.Len() == 0 {
		return revision(data)
	}
	h := sha256.New()
	h.Write(data)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "\x00%s %d\n", name, len(files[name].Data))
		h.Write(files[name].Data)
	}
	fmt.Fprintf(h, "\x00shared %s", shared.Digest())
	return hex.EncodeToString(h.Sum(nil))
}
