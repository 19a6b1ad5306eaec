package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/server"
	"github.com/sundial-cron/sundial/statemachine"
)

// runJobSchedule runs "sundial schedule next|explain --config FILE --job
// ID": the job's fire times after from as the server would run them, with
// its zone, DST policy, hashing, calendars, window and jitter applied, and
// every fire time of its expression that is not an occurrence listed
// between them with why (runs of one reason on one line). explain first
// says all that bounds them, and lists five.
func runJobSchedule(verb string, q scheduleQuery, from time.Time, stdout, stderr io.Writer) int {
	def, id, code := loadJob(q, stderr)
	if code != 0 {
		return code
	}
	s, err := def.Parse(id)
	if err != nil {
		fmt.Fprintf(stderr, "sundial schedule %s: job %s: %v\n", verb, id, err)
		return 1
	}
	n := q.n
	if verb == "explain" {
		explainJob(stdout, id, def, s)
		n = 5
	}
	listOccurrences(stdout, s, def, id, from, n)
	return 0
}

// loadJob reads the config file and finds the job, by its id in the
// project or its full id.
func loadJob(q scheduleQuery, stderr io.Writer) (engine.Definition, string, int) {
	fail := func(format string, args ...any) (engine.Definition, string, int) {
		fmt.Fprintf(stderr, "sundial schedule: "+format+"\n", args...)
		return engine.Definition{}, "", 1
	}
	data, err := config.ReadFile(q.config)
	if err != nil {
		return fail("--config: %v", err)
	}
	ics, err := config.ReadICSDir(filepath.Dir(q.config))
	if err != nil {
		return fail("--config: %v", err)
	}
	var shared *config.SharedCalendars
	if q.calendars != "" {
		if shared, err = config.LoadCalendars(q.calendars); err != nil {
			fmt.Fprintln(stderr, err)
			return fail("--calendars %s: invalid", q.calendars)
		}
	}
	tgts, err := server.ConfigTargets()
	if err != nil {
		return fail("%v", err)
	}
	p, err := config.ParseWith(q.config, data, tgts, config.Calendars{ICS: ics, Shared: shared})
	if err != nil {
		var es config.Errors
		if errors.As(err, &es) {
			fmt.Fprintln(stderr, err)
			return fail("--config %s: invalid", q.config)
		}
		return fail("--config: %v", err)
	}
	var ids []string
	for _, j := range p.Jobs {
		if j.ID == q.job || jobid.Split(j.ID).Job == q.job {
			return j.Definition, j.ID, 0
		}
		ids = append(ids, jobid.Split(j.ID).Job)
	}
	return fail("--job %q: no such job in %s (it has %s)", q.job, q.config, strings.Join(ids, ", "))
}

// explainJob says what decides the job's fire times, one thing a line.
func explainJob(w io.Writer, id string, def engine.Definition, s *schedule.Schedule) {
	fmt.Fprintf(w, "%s: %s\n", id, s.Explain())
	for _, set := range s.Settings() {
		fmt.Fprintf(w, "  %s: %s\n", set.Name, set.Value)
	}
	if m := def.Policy.MaxRuns; m > 0 {
		fmt.Fprintf(w, "  max_runs: %d scheduled runs, counted by the server from when the cap was set; not shown below\n", m)
	}
	if j := def.Policy.Jitter; j > 0 {
		fmt.Fprintf(w, "  jitter: below %s, hashed from the job and the occurrence\n", j)
	}
}

// listOccurrences prints the job's next n occurrences after from, and the
// fire times of its expression before and between them that are not
// occurrences, with why (schedule.Preview). The cap on runs is not known
// here: the server counts them.
func listOccurrences(w io.Writer, s *schedule.Schedule, def engine.Definition, id string, from time.Time, n int) {
	p := s.Preview(schedule.Lookahead{From: from, N: n})
	for _, l := range p.Lines {
		switch {
		case !l.Removed():
			printOccurrence(w, l.First, id, def)
		case l.Count == 1:
			fmt.Fprintf(w, "%s  removed: %s\n", l.First.Format(time.RFC3339), l.Why)
		case l.First.Equal(l.Last):
			fmt.Fprintf(w, "%s  %d removed: %s\n", l.First.Format(time.RFC3339), l.Count, l.Why)
		default:
			fmt.Fprintf(w, "%s .. %s  %d removed: %s\n", l.First.Format(time.RFC3339), l.Last.Format(time.RFC3339), l.Count, l.Why)
		}
	}
	if p.End != "" {
		fmt.Fprintln(w, p.End)
	}
}

// printOccurrence prints an occurrence, and when its jitter delays it,
// when it is launched.
func printOccurrence(w io.Writer, t time.Time, id string, def engine.Definition) {
	if j := statemachine.Jitter(id, t, def.Policy.Jitter); j > 0 {
		fmt.Fprintf(w, "%s  (jitter +%s: launched at %s)\n", t.Format(time.RFC3339), j, t.Add(j).Format(time.RFC3339Nano))
		return
	}
	fmt.Fprintln(w, t.Format(time.RFC3339))
}
