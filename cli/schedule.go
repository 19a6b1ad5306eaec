package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

// ScheduleUsage lists the schedule verbs, for the command's usage.
const ScheduleUsage = `  sundial schedule next EXPR [--tz ZONE] [--from RFC3339] [-n N] [--job-id ID] [--dst-gap skip|shift] [--dst-repeat first|last|both] [--json]
  sundial schedule next --config FILE --job ID [--calendars PATH] [--from RFC3339] [-n N] [--json]
  sundial schedule explain EXPR [same flags] | --config FILE --job ID [--calendars PATH] [--from RFC3339] [--json]
`

// RunSchedule runs "sundial schedule next|explain EXPR [flags]", or of a
// job of a config file with --config and --job (runJobSchedule): the
// command's verbs that ask no server.
func RunSchedule(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	if len(args) == 0 || (args[0] != "next" && args[0] != "explain") {
		fmt.Fprint(stderr, "sundial schedule: expected next or explain\n"+ScheduleUsage)
		return ExitUsage
	}
	verb := args[0]
	q, err := parseScheduleArgs(verb, args[1:], stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial schedule %s: %v\n", verb, err)
		}
		return ExitUsage
	}
	from := now()
	if q.from != "" {
		if from, err = time.Parse(time.RFC3339Nano, q.from); err != nil {
			fmt.Fprintf(stderr, "sundial schedule %s: --from %q is not an RFC3339 time such as 2026-03-08T01:00:00-05:00\n", verb, q.from)
			return ExitUsage
		}
	}
	if q.config != "" {
		return runJobSchedule(verb, q, from, stdout, stderr)
	}
	s, err := schedule.Parse(q.expr, q.opts)
	if err != nil {
		fmt.Fprintf(stderr, "sundial schedule %s: %q: %v\n", verb, q.expr, err)
		return ExitUsage
	}
	n := q.n
	if verb == "explain" {
		n = 5
	}
	out := scheduleJSON{Schedule: q.expr, TimeZone: s.Location().String(), Explanation: s.Explain(), FireTimes: []time.Time{}}
	for t, ok := s.Next(from); ok && len(out.FireTimes) < n; t, ok = s.Next(t) {
		out.FireTimes = append(out.FireTimes, t)
	}
	if q.json {
		return printJSON(stdout, stderr, "sundial schedule "+verb, out)
	}
	if verb == "explain" {
		fmt.Fprintln(stdout, out.Explanation)
	}
	for _, t := range out.FireTimes {
		fmt.Fprintln(stdout, t.Format(time.RFC3339))
	}
	return 0
}

// scheduleJSON is what schedule next|explain EXPR --json prints: the
// expression, its zone, what it means, and its fire times (5 for explain).
type scheduleJSON struct {
	Schedule    string      `json:"schedule"`
	TimeZone    string      `json:"time_zone"`
	Explanation string      `json:"explanation"`
	FireTimes   []time.Time `json:"fire_times"`
}

// printJSON prints v indented, for scripts, as the verbs that ask no
// server print their --json (or --format json); command names the verb
// in an error.
func printJSON(stdout, stderr io.Writer, command string, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", command, err)
		return ExitFailure
	}
	return 0
}

type scheduleQuery struct {
	expr string
	from string
	n    int
	json bool
	opts schedule.Options
	// config, job and calendars name a job of a config file and the
	// server's shared calendars, instead of expr and opts.
	config, job, calendars string
}

// parseScheduleArgs parses EXPR and the flags, which may come before or
// after it, as users type them either way.
func parseScheduleArgs(verb string, args []string, stderr io.Writer) (scheduleQuery, error) {
	var q scheduleQuery
	fs := flag.NewFlagSet("sundial schedule "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	tz := fs.String("tz", "", "IANA time zone of the schedule (default UTC)")
	fs.StringVar(&q.from, "from", "", "list fire times strictly after this RFC3339 instant (default now)")
	fs.IntVar(&q.n, "n", 10, "how many fire times to list")
	fs.BoolVar(&q.json, "json", false, "print JSON, for scripts")
	fs.StringVar(&q.opts.JobID, "job-id", "", "job id that seeds hashed fields (H)")
	gap := fs.String("dst-gap", "", "for times skipped by DST: skip or shift")
	repeat := fs.String("dst-repeat", "", "for times repeated by DST: first, last or both")
	fs.StringVar(&q.config, "config", "", "a project's config file: show the fire times of its job --job, with all that bounds them")
	fs.StringVar(&q.job, "job", "", "with --config: the job's id")
	fs.StringVar(&q.calendars, "calendars", "", "with --config: the server's shared calendars (serve --calendars)")

	var exprs []string
	for {
		if err := fs.Parse(args); err != nil {
			return q, err
		}
		if fs.NArg() == 0 {
			break
		}
		exprs = append(exprs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if q.config != "" || q.job != "" || q.calendars != "" {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		for _, name := range []string{"tz", "job-id", "dst-gap", "dst-repeat"} {
			if given[name] {
				return q, fmt.Errorf("--%s: not with --config, whose job says it", name)
			}
		}
		switch {
		case q.config == "" || q.job == "":
			return q, errors.New("--config and --job go together")
		case len(exprs) > 0:
			return q, fmt.Errorf("a schedule expression (%q) and --config: give one", exprs[0])
		case q.n < 0:
			return q, fmt.Errorf("-n %d: expected a count >= 0", q.n)
		}
		return q, nil
	}
	if len(exprs) != 1 {
		return q, fmt.Errorf("expected one schedule expression (quote it), got %d", len(exprs))
	}
	q.expr = exprs[0]
	if q.n < 0 {
		return q, fmt.Errorf("-n %d: expected a count >= 0", q.n)
	}
	var err error
	if *tz != "" {
		if q.opts.Location, err = schedule.LoadZone(*tz); err != nil {
			return q, fmt.Errorf("--tz: %v", err)
		}
	}
	if q.opts.Gap, err = schedule.ParseGap(*gap); err != nil {
		return q, fmt.Errorf("--dst-gap: %v", err)
	}
	if q.opts.Repeat, err = schedule.ParseRepeat(*repeat); err != nil {
		return q, fmt.Errorf("--dst-repeat: %v", err)
	}
	return q, nil
}
