package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundial-cron/sundial/client"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/slo"
)

// describedRuns is how many of its newest invocations describe shows.
const describedRuns = 5

// cliJobDetail is a job's detail, as describe prints it.
type cliJobDetail struct {
	cliJob
	Project, Job  string
	TimeZone      string `json:"time_zone"`
	Target        string
	Revision      string
	NextFireTimes []time.Time `json:"next_fire_times"`
	Failures      int         `json:"failures_in_a_row"`
	Health        *struct {
		TaskFailures int    `json:"task_failures"`
		LastError    string `json:"last_error"`
	}
	Definition map[string]json.RawMessage
	Active     []struct {
		ID         string
		Occurrence time.Time
		Attempt    int
		Phase      string
		Since      *time.Time
	}
	Backfill *struct{ From, To, Next time.Time }
	Audit    []struct {
		At     time.Time
		By     string
		Action string
		Reason string
	}
	Invocations []cliRun
}

// describe prints a job: its definition and revision, its state and why,
// what runs now, its next fire times and its newest invocations; raw, the
// API's JSON of it with those invocations.
func describe(ctx context.Context, c *client.Client, jobPath string, raw bool, now time.Time, stdout io.Writer) error {
	var d cliJobDetail
	var objectives *cliObjectives
	if !raw {
		var err error
		if objectives, err = judged(ctx, c, jobPath); err != nil {
			return err
		}
	}
	return call(ctx, c, "GET", fmt.Sprintf("%s?limit=%d", jobPath, describedRuns), nil, raw, stdout, &d, func() { printDetail(d, objectives, now, stdout) })
}

// cliObjectives is a job's objectives judged, as describe prints them.
type cliObjectives struct {
	ServerDefaults bool `json:"server_defaults"`
	Window         string
	From           time.Time
	Records        int
	Truncated      bool
	Attainments    []struct {
		Kind, Lateness string
		Target, Ratio  float64
		Good, Total    int
		BudgetLeft     float64 `json:"budget_left"`
		Met            bool
	}
}

// judged asks for the job's objectives judged; nil for a job without.
func judged(ctx context.Context, c *client.Client, jobPath string) (*cliObjectives, error) {
	var o cliObjectives
	err := c.Do(ctx, "GET", jobPath+"/objectives", nil, &o)
	var refused *client.Error
	if errors.As(err, &refused) && refused.Status == http.StatusNotFound {
		// No objectives, or no such job, which the job's own request
		// says.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// printObjectives prints what each objective attained over its window
// and the error budget left.
func printObjectives(o *cliObjectives, stdout io.Writer) {
	whose := ""
	if o.ServerDefaults {
		whose = ", the server's defaults"
	}
	window := o.Window
	if d, err := time.ParseDuration(o.Window); err == nil {
		window = slo.FormatWindow(d)
	}
	judged := fmt.Sprintf("%d records", o.Records)
	switch {
	case o.Truncated:
		judged = "its newest " + judged
	case o.Records == 1:
		judged = "1 record"
	}
	fmt.Fprintf(stdout, "Objectives (over %s since %s%s, %s):\n", window, o.From.UTC().Format(time.RFC3339), whose, judged)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  OBJECTIVE\tTARGET\tATTAINED\tBUDGET LEFT")
	for _, a := range o.Attainments {
		what := "succeeded"
		if a.Kind == "lateness" {
			lateness := a.Lateness
			if d, err := time.ParseDuration(a.Lateness); err == nil {
				lateness = schedule.ShortDuration(d)
			}
			what = "on time (within " + lateness + ")"
		}
		attained := fmt.Sprintf("%s (%d of %d)", slo.RatioPercent(a.Ratio), a.Good, a.Total)
		budget := slo.Percent(a.BudgetLeft)
		if a.BudgetLeft <= 0 {
			budget += ": spent"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", what, slo.Percent(a.Target), attained, budget)
	}
	tw.Flush()
}

func printDetail(d cliJobDetail, objectives *cliObjectives, now time.Time, stdout io.Writer) {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	line := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	line("Job", d.ID)
	state := d.State
	if d.Reason != "" {
		state += ": " + d.Reason
	}
	if d.State == "PAUSED" {
		for _, a := range d.Audit {
			if a.Action == "pause" {
				state += fmt.Sprintf(" (by %s at %s)", a.By, a.At.UTC().Format(time.RFC3339))
				break
			}
		}
	}
	line("State", state)
	if d.Failures > 0 {
		line("Failures in a row", fmt.Sprint(d.Failures))
	}
	if h := d.Health; h != nil {
		line("Health", fmt.Sprintf("the last %d deliveries of its tasks failed; the last error: %s", h.TaskFailures, h.LastError))
	}
	line("Schedule", d.Schedule+" ("+d.TimeZone+")")
	line("Target", d.Target)
	line("Revision", orDash(short(d.Revision)))
	var policy []string
	for _, k := range []string{"overlap", "max_concurrent", "catchup_window", "timeout", "max_attempts", "min_backoff", "max_backoff", "auto_disable_after", "jitter", "idempotent", "dst_gap", "dst_repeat"} {
		if v, ok := d.Definition[k]; ok {
			policy = append(policy, k+"="+strings.Trim(string(v), `"`))
		}
	}
	line("Policy", strings.Join(policy, " "))
	if spec, ok := d.Definition["spec"]; ok {
		var b bytes.Buffer
		if json.Compact(&b, spec) == nil {
			spec = b.Bytes()
		}
		line("Spec", string(spec))
	}
	if b := d.Backfill; b != nil {
		line("Backfill", fmt.Sprintf("[%s, %s), at %s", b.From.UTC().Format(time.RFC3339), b.To.UTC().Format(time.RFC3339), b.Next.UTC().Format(time.RFC3339)))
	}
	for _, a := range d.Active {
		since := ""
		if a.Since != nil {
			since = " since " + a.Since.UTC().Format(time.RFC3339)
		}
		line("Unfinished", fmt.Sprintf("%s %s, attempt %d%s", a.ID, a.Phase, a.Attempt, since))
	}
	tw.Flush()
	fmt.Fprintln(stdout, "Next fire times:")
	switch {
	case len(d.NextFireTimes) > 0:
	case d.Schedule == "triggered":
		fmt.Fprintln(stdout, "  none: it runs when triggered")
	case d.State == "PAUSED" || d.State == "DISABLED":
		fmt.Fprintf(stdout, "  none while %s\n", d.State)
	default:
		fmt.Fprintln(stdout, "  none planned")
	}
	for _, t := range d.NextFireTimes {
		fmt.Fprintf(stdout, "  %s\n", t.UTC().Format(time.RFC3339))
	}
	if objectives != nil {
		printObjectives(objectives, stdout)
	}
	fmt.Fprintln(stdout, "Last runs, newest first:")
	if len(d.Invocations) == 0 {
		fmt.Fprintln(stdout, "  none yet")
		return
	}
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  INVOCATION\tOCCURRENCE\tSTATUS\tATTEMPT\tDURATION\tMESSAGE")
	for _, r := range d.Invocations {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Occurrence.UTC().Format(time.RFC3339), runStatus(r), attempt(r), duration(r, now), shorten(r.Message, 60))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
