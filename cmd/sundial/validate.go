package main

import (
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
	invalid, errs, jobs := 0, 0, 0
	for _, f := range files {
		err := f.Err
		if err == nil {
			var p *config.Project
			if p, err = config.ParseWith(f.Path, f.Data, tgts, config.Calendars{ICS: f.ICS, Shared: shared}); err == nil {
				jobs += len(p.Jobs)
				continue
			}
		}
		invalid++
		var es config.Errors
		if errors.As(err, &es) {
			errs += len(es)
		} else {
			errs++
		}
		fmt.Fprintln(stderr, err)
	}
	if invalid > 0 {
		fmt.Fprintf(stderr, "%d of %s invalid, %s (target kinds known: %s)\n", invalid, count(len(files), "config file"), count(errs, "error"), strings.Join(slices.Sorted(maps.Keys(tgts)), ", "))
		return 1
	}
	fmt.Fprintf(stdout, "%s, %s: valid\n", count(len(files), "config file"), count(jobs, "job"))
	return 0
}

// count says how many of a thing there are, in English.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
