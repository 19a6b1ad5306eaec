package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/sundial-cron/sundial/internal/version"
)

// runVersion runs "sundial version" (and "sundial --version"): which build
// this is, in words or, with --json, as GET /api/v1/version answers.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sundial version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the JSON GET /api/v1/version answers with")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sundial version: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	v := version.Get()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "sundial version: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "sundial %s\n", v.Version)
	if v.Revision != "" {
		modified := ""
		if v.Modified {
			modified = ", with local changes"
		}
		fmt.Fprintf(stdout, "  revision     %s%s\n", v.Revision, modified)
	}
	if !v.CommitTime.IsZero() {
		fmt.Fprintf(stdout, "  commit time  %s\n", v.CommitTime.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(stdout, "  go           %s %s\n", v.GoVersion, v.Platform)
	return 0
}
