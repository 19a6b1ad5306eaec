package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/schedule"
)

// decoder walks a file's YAML nodes by hand instead of unmarshalling into
// structs: that is what lets it report every error with its line, name the
// field by its path, and refuse a key given twice.
type decoder struct {
	file string
	errs Errors
	// specBytes counts the bytes the file's target specs expand to so far,
	// against maxFileSpecBytes.
	specBytes int
	// dropped counts the errors past maxErrors, which are not kept.
	dropped int
	// retainedExtra counts the records the file's jobs ask to keep beyond
	// retainedPerJob each, against maxRetainedExtra.
	retainedExtra int
	// env is what the file's calendars may draw on; calendars are the
	// project's own, and badCalendars those whose definition had errors,
	// which a job naming them is not told of again.
	env          Calendars
	projectCals  map[string]*schedule.Calendar
	badCalendars map[string]bool
}

// A file's errors are bounded whatever it holds: each error quotes at
// most maxQuoted bytes of what it is about, and a file keeps maxErrors of
// them. Without the bounds, a large value named by alias as each of many
// jobs made errors thousands of times the file's size, which the
// project's status keeps and every refresh logs.
const (
	maxErrors   = 100
	maxQuoted   = 100
	maxErrField = 200  // bytes of an error's field path, whose keys may be long
	maxErrMsg   = 1000 // bytes of an error's message, which may quote a target's
)

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.add(&Error{File: d.file, Line: line, Field: clip(field, maxErrField)}, format, args...)
}

// add keeps an error, with its message made from format and args, unless
// the file has maxErrors already: then it only counts it, and does not
// format a message no one will read.
func (d *decoder) add(e *Error, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		d.dropped++
		return
	}
	e.Msg = clip(fmt.Sprintf(format, args...), maxErrMsg)
	d.errs = append(d.errs, e)
}

// failures is how many errors the file has so far, kept or not.
func (d *decoder) failures() int { return len(d.errs) + d.dropped }

// clip cuts s to at most max bytes, on a character boundary, and says so.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// quote is s quoted, cut to maxQuoted bytes.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return clip(strconv.Quote(s[:maxQuoted+1]), maxQuoted)
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// describe names what a node is, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!str":
			return "the string " + quote(n.Value)
		case "!!int":
			return "the number " + clip(n.Value, maxQuoted)
		case "!!float":
			return "the number " + clip(n.Value, maxQuoted)
		case "!!bool":
			return n.Value
		}
		return clip(n.Tag, maxQuoted) + " " + quote(n.Value)
	}
	return "something else"
}

// field is a mapping's value with the key it was given under.
type field struct {
	key, value *yaml.Node
}

// mapping returns the fields of a mapping node by name. A key outside
// known, a key given twice and a key that is not a string are errors; the
// fields it could read are returned all the same, so their own errors are
// found too. It returns ok=false when n is not a mapping at all.
func (d *decoder) mapping(n *yaml.Node, path string, known ...string) (map[string]field, bool) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", describe(n))
		return nil, false
	}
	out := map[string]field{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			d.errorf(k, path, "keys must be field names; merge keys (<<) are not supported")
			continue
		}
		name := k.Value
		sub := join(path, name)
		switch prev, dup := out[name]; {
		case dup:
			d.errorf(k, sub, "given twice (first at line %d)", prev.key.Line)
		case !slices.Contains(known, name):
			// A guess costs edits against every known name: made only
			// for an error the file keeps.
			guess := ""
			if len(d.errs) < maxErrors {
				guess = nearest(name, known)
			}
			if guess != "" {
				d.errorf(k, sub, "unknown field: did you mean %s? (want one of %s)", guess, strings.Join(known, ", "))
				break
			}
			d.errorf(k, sub, "unknown field (want one of %s)", strings.Join(known, ", "))
		default:
			out[name] = field{key: k, value: v}
		}
	}
	return out, true
}

// join appends a field name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// str reads a string scalar.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errorf(n, path, "want a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// integer reads a whole number that is not negative.
func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	n = resolve(n)
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		d.errorf(n, path, "want a whole number, got %s", describe(n))
		return 0, false
	}
	if v < 0 {
		d.errorf(n, path, "want a number that is not negative, got %d", v)
		return 0, false
	}
	return v, true
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	n = resolve(n)
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		d.errorf(n, path, "want true or false, got %s", describe(n))
		return false, false
	}
	return v, true
}

// duration reads a Go duration such as "90s" or "1h30m" that is not
// negative; a bare 0 is accepted, any other bare number is refused because
// its unit would be a guess.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" && n.Value == "0" {
		return 0, true
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errorf(n, path, "want a duration such as 90s or 10m, got %s", describe(n))
		return 0, false
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "want a duration such as 90s or 10m, got %q", n.Value)
		return 0, false
	}
	if v < 0 {
		d.errorf(n, path, "want a duration that is not negative, got %s", n.Value)
		return 0, false
	}
	return v, true
}
