package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/forecast"
	"github.com/sundial-cron/sundial/server"
)

// DiffUsage says the diff verb, for the command's usage.
const DiffUsage = `  sundial diff OLD_DIR NEW_DIR | --repo DIR [--path P] OLD_REV NEW_REV
      [--format text|markdown|json] [--fail-on never|warning|change] [--herd N] [--from RFC3339] [--calendars PATH]
      exit status: 0 done; 1 a config unreadable or invalid; 2 bad input; 5 the diff has what --fail-on names
`

// ExitFailOn: sundial diff found what --fail-on names (a herd warning, or
// any change), for a config repo's CI to fail on.
const ExitFailOn = 5

// RunDiff runs "sundial diff OLD NEW": what changing the config OLD into
// NEW does, per job (added, removed, changed fields, the fire times in
// the next week that move) and to the launches per second over the next
// day, warning of each second the change takes past --herd launches, with
// the hashed schedule (H) that would spread them. OLD and NEW are
// directories, as serve reads its config directory, or with --repo two
// revisions of a local git repo.
func RunDiff(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	stdout, stderr = &inert{w: stdout}, &inert{w: stderr}
	q, err := parseDiffArgs(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial diff: %v\n", err)
		}
		return ExitUsage
	}
	if q.from.IsZero() {
		q.from = now().Truncate(time.Second)
	}
	var shared *config.SharedCalendars
	if q.calendars != "" {
		if shared, err = config.LoadCalendars(q.calendars); err != nil {
			fmt.Fprintln(stderr, err)
			fmt.Fprintf(stderr, "sundial diff: --calendars %s: invalid\n", q.calendars)
			return ExitFailure
		}
	}
	var sides [2][]engine.Job
	for i, side := range q.sides {
		if sides[i], err = q.read(side, shared); err != nil {
			fmt.Fprintln(stderr, err)
			fmt.Fprintf(stderr, "sundial diff: %s: invalid\n", side)
			return ExitFailure
		}
	}
	d := forecast.Compare(sides[0], sides[1], forecast.Options{Start: q.from.UTC(), Herd: q.herd})
	switch q.format {
	case "json":
		if code := printJSON(stdout, stderr, "sundial diff", d); code != 0 {
			return code
		}
	case "markdown":
		writeMarkdown(stdout, d, q.sides)
	default:
		writeText(stdout, d)
	}
	switch {
	case q.failOn == "warning" && d.Warnings() > 0, q.failOn == "change" && (d.Changes() > 0 || d.Warnings() > 0):
		return ExitFailOn
	}
	return 0
}

type diffQuery struct {
	sides          [2]string
	repo, path     string
	format, failOn string
	herd           int
	from           time.Time
	calendars      string
}

func parseDiffArgs(args []string, stderr io.Writer) (diffQuery, error) {
	var q diffQuery
	fs := flag.NewFlagSet("sundial diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&q.repo, "repo", "", "a local git repo: OLD and NEW are two of its revisions (main, HEAD~1, origin/main, a sha)")
	fs.StringVar(&q.path, "path", "", "with --repo: the directory of the <project>.yaml files in the repo (default its root)")
	fs.StringVar(&q.format, "format", "text", "text, markdown (for a pull request's comment) or json")
	fs.StringVar(&q.failOn, "fail-on", "never", "exit 5 when the diff has a herd warning (warning), any change or warning (change), or never")
	fs.IntVar(&q.herd, "herd", forecast.DefaultHerd, "warn of a second the change takes past this many launches")
	from := fs.String("from", "", "forecast from this RFC3339 instant (default now)")
	fs.StringVar(&q.calendars, "calendars", "", "the server's shared calendars (serve --calendars)")
	var sides []string
	for {
		if err := fs.Parse(args); err != nil {
			return q, err
		}
		if fs.NArg() == 0 {
			break
		}
		sides = append(sides, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(sides) != 2:
		return q, fmt.Errorf("expected OLD and NEW, got %d arguments\n%s", len(sides), DiffUsage)
	case q.format != "text" && q.format != "markdown" && q.format != "json":
		return q, fmt.Errorf("--format %q: want text, markdown or json", q.format)
	case q.failOn != "never" && q.failOn != "warning" && q.failOn != "change":
		return q, fmt.Errorf("--fail-on %q: want never, warning or change", q.failOn)
	case q.herd < 1:
		return q, fmt.Errorf("--herd %d: want a number of launches >= 1", q.herd)
	case q.path != "" && q.repo == "":
		return q, errors.New("--path: only with --repo")
	}
	if *from != "" {
		t, err := time.Parse(time.RFC3339Nano, *from)
		if err != nil {
			return q, fmt.Errorf("--from %q is not an RFC3339 time such as 2026-11-01T00:00:00Z", *from)
		}
		q.from = t
	}
	q.sides = [2]string(sides)
	if q.repo == "" {
		for _, dir := range sides {
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				return q, fmt.Errorf("%s: not a directory (to compare revisions of a repo, give --repo DIR)", dir)
			}
		}
	}
	return q, nil
}

// read reads one side's configs and returns their jobs, or every error
// of its invalid files.
func (q diffQuery) read(side string, shared *config.SharedCalendars) ([]engine.Job, error) {
	var files []config.File
	if q.repo != "" {
		s, err := config.ReadRevision(q.repo, side, q.path)
		if err != nil {
			return nil, err
		}
		files = s.Files
	} else {
		var err error
		if files, err = config.ReadDir(side); err != nil {
			return nil, err
		}
	}
	tgts, err := server.ConfigTargets()
	if err != nil {
		return nil, err
	}
	var jobs []engine.Job
	var errs []error
	for _, f := range files {
		if f.Err != nil {
			errs = append(errs, f.Err)
			continue
		}
		p, err := config.ParseWith(f.Path, f.Data, tgts, config.Calendars{ICS: f.ICS, Shared: shared})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		jobs = append(jobs, p.Jobs...)
	}
	return jobs, errors.Join(errs...)
}
