package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/server"
)

// runValidate runs "sundial validate [--calendars PATH] DIR_OR_FILE...":
// it checks project configs the way the server would load them and lists
// every error, for a config repo's CI. A directory is read as the server
// reads its config directory, and a file with the .ics files beside it;
// --calendars names the calendars the server shares, as serve's does. It
// exits 1 when a config (or a shared calendar) is invalid and exitUsage
// when it was given nothing to check or a path that does not exist.
func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sundial validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	calendars := fs.String("calendars", "", "the server's shared calendars (serve --calendars): a directory of .ics files or a YAML file")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout (each error with its file, line and field), for a config repo's CI to annotate; the exit status is the same")
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(paths) == 0 {
		fmt.Fprint(stderr, "sundial validate: expected one or more config files or directories\n"+usage)
		return exitUsage
	}
	var shared *config.SharedCalendars
	if *calendars != "" {
		var err error
		if shared, err = config.LoadCalendars(*calendars); err != nil {
			fmt.Fprintln(stderr, err)
			fmt.Fprintf(stderr, "--calendars %s: invalid\n", *calendars)
			return 1
		}
	}
	var files []config.File
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			fmt.Fprintf(stderr, "sundial validate: %v\n", err)
			return exitUsage
		}
		if !info.IsDir() {
			data, err := config.ReadFile(path)
			f := config.File{Path: path, Data: data, Err: err}
			if f.ICS, err = config.ReadICSDir(filepath.Dir(path)); err != nil && f.Err == nil {
				f.Err = err
			}
			files = append(files, f)
			continue
		}
		dir, err := config.ReadDir(path)
		if err != nil {
			fmt.Fprintf(stderr, "sundial validate: %v\n", err)
			return exitUsage
		}
		files = append(files, dir...)
	}
	tgts, err := server.ConfigTargets()
	if err != nil {
		fmt.Fprintf(stderr, "sundial validate: %v\n", err)
		return 1
	}
	kinds := slices.Sorted(maps.Keys(tgts))
	res := validation{Files: len(files), Errors: []validationError{}, TargetKinds: kinds}
	for _, f := range files {
		err := f.Err
		if err == nil {
			var p *config.Project
			if p, err = config.ParseWith(f.Path, f.Data, tgts, config.Calendars{ICS: f.ICS, Shared: shared}); err == nil {
				res.Jobs += len(p.Jobs)
				continue
			}
		}
		res.Invalid++
		res.Errors = append(res.Errors, errorsOf(f.Path, err)...)
		if !*asJSON {
			fmt.Fprintln(stderr, err)
		}
	}
	res.Valid = res.Invalid == 0
	switch {
	case *asJSON:
		out, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "sundial validate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s\n", out)
	case res.Valid:
		fmt.Fprintf(stdout, "%s, %s: valid\n", count(len(files), "config file"), count(res.Jobs, "job"))
	default:
		fmt.Fprintf(stderr, "%d of %s invalid, %s (target kinds known: %s)\n", res.Invalid, count(len(files), "config file"), count(len(res.Errors), "error"), strings.Join(kinds, ", "))
	}
	if !res.Valid {
		return 1
	}
	return 0
}

// validation is what validate found, as --json prints it.
type validation struct {
	Valid       bool              `json:"valid"`
	Files       int               `json:"files"`
	Invalid     int               `json:"invalid_files"`
	Jobs        int               `json:"jobs"` // of the valid files
	Errors      []validationError `json:"errors"`
	TargetKinds []string          `json:"target_kinds"`
}

// validationError is one config.Error: where, and what.
type validationError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// errorsOf is every error err holds of the file at path: each
// config.Error with its line and field, or the whole error as the file's.
func errorsOf(path string, err error) []validationError {
	var es config.Errors
	var e *config.Error
	switch {
	case errors.As(err, &es):
	case errors.As(err, &e):
		es = config.Errors{e}
	default:
		return []validationError{{File: path, Message: err.Error()}}
	}
	out := make([]validationError, len(es))
	for i, e := range es {
		out[i] = validationError{File: e.File, Line: e.Line, Field: e.Field, Message: e.Msg}
	}
	return out
}

// count says how many of a thing there are, in English.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
