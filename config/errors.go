package config

import (
	"fmt"
	"strings"
)

// Error is one thing wrong in a config file, with where it is.
type Error struct {
	File  string // the path as it was given
	Line  int    // 1-based; 0 when the error is about the whole file
	Field string // the path to the field, e.g. "jobs[1].schedule"; "" for the file
	Msg   string
}

// Error formats the error as "file:line: field: message", leaving out
// what it does not know.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every error found in one or more files, in file and line order.
type Errors []*Error

// Error lists the errors, one a line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each one.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
