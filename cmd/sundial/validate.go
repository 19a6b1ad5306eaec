package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/server"
)

// runValidate runs "sundial validate DIR_OR_FILE...": it checks project
// configs the way the server would load them and lists every error, for a
// config repo's CI. A directory is read as the server reads its config
// directory. It exits 1 when a config is invalid and exitUsage when it was
// given nothing to check or a path that does not exist.
func runValidate(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, "sundial validate: expected one or more config files or directories\n"+usage)
		return exitUsage
	}
	var files []config.File
	for _, path := range args {
		info, err := os.Stat(path)
		if err != nil {
			fmt.Fprintf(stderr, "sundial validate: %v\n", err)
			return exitUsage
		}
		if !info.IsDir() {
			data, err := config.ReadFile(path)
			files = append(files, config.File{Path: path, Data: data, Err: err})
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
			if p, err = config.Parse(f.Path, f.Data, tgts); err == nil {
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
