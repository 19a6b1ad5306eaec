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
		n = 5
	}
	p := s.Preview(schedule.Lookahead{From: from, N: n})
	if q.json {
		return printJSON(stdout, stderr, "sundial schedule "+verb, jobScheduleOf(id, def, s, p))
	}
	if verb == "explain" {
		explainJob(stdout, id, def, s)
	}
	listOccurrences(stdout, p, def, id)
	return 0
}

// jobScheduleJSON is what schedule next|explain --config --job --json
// prints: the job, what decides its fire times, and the preview's lines
// (5 for explain): each an occurrence (with when its jitter launches it)
// or fire times of its expression that are not occurrences, and why.
type jobScheduleJSON struct {
	Job         string            `json:"job"`
	Schedule    string            `json:"schedule"`
	Explanation string            `json:"explanation"`
	Settings    []settingJSON     `json:"settings"`
	MaxRuns     int64             `json:"max_runs,omitzero"`
	Jitter      string            `json:"jitter,omitzero"`
	Lines       []previewLineJSON `json:"lines"`
	End         string            `json:"end,omitzero"`
}

type settingJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type previewLineJSON struct {
	At       time.Time `json:"at"`
	LaunchAt time.Time `json:"launch_at,omitzero"`
	Last     time.Time `json:"last,omitzero"`
	Count    int       `json:"count,omitzero"`
	Removed  string    `json:"removed,omitzero"`
}

func jobScheduleOf(id string, def engine.Definition, s *schedule.Schedule, p schedule.Preview) jobScheduleJSON {
	out := jobScheduleJSON{Job: id, Schedule: def.Schedule, Explanation: s.Explain(), MaxRuns: def.Policy.MaxRuns,
		Settings: []settingJSON{}, Lines: []previewLineJSON{}, End: p.End}
	if j := def.Policy.Jitter; j > 0 {
		out.Jitter = j.String()
	}
	for _, set := range s.Settings() {
		out.Settings = append(out.Settings, settingJSON{set.Name, set.Value})
	}
	for _, l := range p.Lines {
		line := previewLineJSON{At: l.First}
		if l.Removed() {
			line.Last, line.Count, line.Removed = l.Last, l.Count, l.Why
		} else if j := statemachine.Jitter(id, l.First, def.Policy.Jitter); j > 0 {
			line.LaunchAt = l.First.Add(j)
		}
		out.Lines = append(out.Lines, line)
	}
	return out
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

// listOccurrences prints the job's preview: its next occurrences, and the
// fire times of its expression before and between them that are not
// occurrences, with why. The cap on runs is not known here: the server
// counts them.
func listOccurrences(w io.Writer, p schedule.Preview, def engine.Definition, id string) {
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
