// Package config reads project configs and makes the engine run them.
//
// A project's config is one YAML file in a config directory; the file's name
// without .yaml or .yml is the project id. Parse turns a file into a
// Project (one valid revision) or into Errors that name the file, line and
// field of everything wrong with it. A Refresher re-reads the directory, has
// the engine apply each new valid revision (engine.ApplyProject), and keeps
// the last good revision of each project running when a new one is invalid.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/targets"
)

// Project is one valid revision of a project's config.
type Project struct {
	ID       string
	File     string
	Revision string // the hex SHA-256 of the file's bytes
	Jobs     []engine.Job
	// Grants are the roles the file's `roles:` list grants; none makes
	// the project visible to the server's administrators only.
	Grants []access.RoleGrant
}

// projectID is what a config file's name may be: lower case, so that the
// same project cannot exist twice on a case-insensitive file system, and
// nothing that needs escaping in a URL.
var projectID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidProjectID reports whether id can be a project's id, so that a
// server setting naming projects can refuse one that no project can have.
func ValidProjectID(id string) bool {
	return projectID.MatchString(id)
}

// jobID is what a job's id may be.
var jobID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// ProjectOf returns the project id of a config file's path: its base name
// without .yaml or .yml. ok is false for a file that is not a config.
func ProjectOf(path string) (id string, ok bool) {
	base := filepath.Base(path)
	for _, ext := range []string{".yaml", ".yml"} {
		if id, ok := strings.CutSuffix(base, ext); ok {
			return id, true
		}
	}
	return "", false
}

// Parse reads one project's config file. file names it in errors and gives
// the project id; targets are the kinds the server runs, and each job's
// spec is checked by its target when the target is a targets.Checker. The
// error, if any, is Errors listing what is wrong in the file: the first
// maxErrors things, and how many more there are.
func Parse(file string, data []byte, targets map[string]targets.Target) (*Project, error) {
	return ParseWith(file, data, targets, Calendars{})
}

// ParseWith is Parse of a file whose calendars may draw on cals: the .ics
// files beside it and the server's shared calendars.
func ParseWith(file string, data []byte, targets map[string]targets.Target, cals Calendars) (*Project, error) {
	d := &decoder{file: file, env: cals, badCalendars: map[string]bool{}}
	p := &Project{File: file, Revision: revision(data)}
	id, ok := ProjectOf(file)
	if !ok {
		d.errorf(nil, "", "not a config file name: want <project>.yaml or <project>.yml")
	} else if !projectID.MatchString(id) {
		d.errorf(nil, "", "project id %q (the file's name) must be lower-case letters, digits, _ and -, starting with a letter or digit, at most 63 characters", id)
	}
	p.ID = id
	if root := d.document(data); root != nil {
		d.project(p, root, targets)
	}
	if len(d.errs) > 0 {
		// An .ics file's errors come after the config's, in their own
		// line order.
		slices.SortStableFunc(d.errs, func(a, b *Error) int {
			other := func(e *Error) int {
				if e.File == d.file {
					return 0
				}
				return 1
			}
			return cmp.Or(other(a)-other(b), strings.Compare(a.File, b.File), a.Line-b.Line)
		})
		if d.dropped > 0 {
			d.errs = append(d.errs, &Error{File: d.file, Msg: fmt.Sprintf("and %d more errors", d.dropped)})
		}
		return nil, d.errs
	}
	return p, nil
}

// yamlLine finds the line in a YAML syntax error ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses the file's one YAML document and returns its root node.
func (d *decoder) document(data []byte) *yaml.Node {
	if !d.utf8(data) {
		return nil
	}
	if _, line := itemsBound(data, maxFileItems); line > 0 {
		d.add(&Error{File: d.file, Line: line},
			"more than %d YAML items by this line (keys, values, list items, brackets and words, counted before parsing): a config file may have at most %d, about 100,000 small jobs; split the project",
			maxFileItems, maxFileItems)
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(nil, "", "empty file: want a mapping with a jobs list (`jobs: []` for no jobs)")
			return nil
		}
		d.syntax(err, data)
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		d.errorf(&next, "", "a second YAML document: want one per file")
		return nil
	} else if !errors.Is(err, io.EOF) {
		d.syntax(err, data)
		return nil
	}
	if len(doc.Content) == 0 {
		d.errorf(nil, "", "empty file: want a mapping with a jobs list (`jobs: []` for no jobs)")
		return nil
	}
	return doc.Content[0]
}

// utf8 reports whether data is UTF-8, and if not records where the first
// byte that is not is. The YAML parser finds it too, but says neither line
// nor column; and it would take a UTF-16 file, which nothing else in a
// config repository's tooling (diffs, reviews, grep) reads as text.
func (d *decoder) utf8(data []byte) bool {
	if utf8.Valid(data) {
		return true
	}
	line, col := 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			what := ""
			if line == 1 && col == 1 && (bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff})) {
				what = " (a UTF-16 byte order mark)"
			}
			d.errs = append(d.errs, &Error{File: d.file, Line: line,
				Msg: fmt.Sprintf("column %d: byte 0x%02x is not UTF-8%s: a config file must be UTF-8", col, data[0], what)})
			return false
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		data = data[size:]
	}
	return true
}

// syntax records the YAML parser's refusal of data, at the line a person
// must fix and with what they most likely meant: the parser names where
// it gave up, which for a mis-indented line is the start of its block.
func (d *decoder) syntax(err error, data []byte) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if at, ind, above, below := misindented(data); at > line {
			spaces := "spaces"
			if ind == 1 {
				spaces = "space"
			}
			d.add(&Error{File: d.file, Line: at}, "indented %d %s, between the %d and %d of the lines before it: indent it as the lines it belongs with (bad YAML: %s)",
				ind, spaces, above, below, m[2])
			return
		}
		if hint := syntaxHint(lineOf(data, line)); hint != "" {
			d.add(&Error{File: d.file, Line: line}, "%s (bad YAML: %s)", hint, m[2])
			return
		}
		d.add(&Error{File: d.file, Line: line}, "bad YAML: %s", m[2])
		return
	}
	d.add(&Error{File: d.file}, "bad YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

func (d *decoder) project(p *Project, root *yaml.Node, targets map[string]targets.Target) {
	fields, ok := d.mapping(root, "", "jobs", "roles", "calendars")
	if !ok {
		return
	}
	// Before the jobs, which name them.
	if f, ok := fields["calendars"]; ok {
		d.projectCals = d.calendarList(f.value, "calendars")
	}
	f, ok := fields["jobs"]
	if !ok {
		d.errorf(root, "jobs", "missing: want a list of jobs (`jobs: []` for none)")
		return
	}
	list := resolve(f.value)
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, "jobs", "want a list of jobs, got %s", describe(list))
		return
	}
	seen := map[string]int{} // job id -> line
	for i, n := range list.Content {
		path := fmt.Sprintf("jobs[%d]", i)
		j, ok := d.job(p.ID, n, path, targets)
		if j.ID == "" {
			continue
		}
		if line, dup := seen[j.ID]; dup {
			d.errorf(n, path+".id", "%q is used twice (first at line %d)", jobid.Split(j.ID).Job, line)
			continue
		}
		seen[j.ID] = resolve(n).Line
		if ok {
			p.Jobs = append(p.Jobs, j)
		}
	}
	if f, ok := fields["roles"]; ok {
		names := map[string]int{}
		for id, line := range seen {
			names[jobid.Split(id).Job] = line
		}
		d.roles(p, f.value, names)
	}
}
