package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/sundial-cron/sundial/client"
	"github.com/sundial-cron/sundial/store"
)

// runsQuery is what "sundial runs" asks for.
type runsQuery struct {
	status, since string
	limit         int
}

// check refuses, before any call, what the server would: a status class
// it does not know, an age or time it cannot read, a limit below 1.
func (q *runsQuery) check() error {
	q.status = strings.ToLower(q.status)
	if q.status != "" && !slices.Contains(store.StatusClasses, q.status) {
		return fmt.Errorf("--status %q: want one of %s", q.status, strings.Join(store.StatusClasses, ", "))
	}
	if q.since != "" && !readableSince(q.since) {
		return fmt.Errorf("--since %q: want an age (90m, 24h, 7d) or a time in RFC 3339 (2026-11-01T00:00:00Z)", q.since)
	}
	if q.limit < 1 {
		return fmt.Errorf("--limit %d: want at least 1", q.limit)
	}
	return nil
}

// describe says the filter in words, for a listing that found nothing.
func (q runsQuery) describe() string {
	var s []string
	if q.status != "" {
		s = append(s, q.status)
	}
	if q.since != "" {
		s = append(s, "since "+q.since)
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, ", ") + ")"
}

// readableSince tells a --since the API reads: a time in RFC 3339, a
// positive Go duration, or a whole number of days.
func readableSince(s string) bool {
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return true
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d > 0
	}
	days, ok := strings.CutSuffix(s, "d")
	n, err := strconv.Atoi(days)
	return ok && err == nil && n > 0 && n <= 36500
}

// cliRun is an invocation as "sundial runs" prints it.
type cliRun struct {
	JobID      string `json:"job_id"`
	ID         string
	Status     string
	Occurrence time.Time
	Attempt    int
	Started    *time.Time
	Ended      *time.Time
	Message    string
	Reason     string
	Count      int
}

// printRuns prints the newest q.limit invocations of listing, a page of
// the API at a time (a page may be short: the caller may read only some
// of the project's jobs), as a table or, raw, as {"invocations": [...]}.
func printRuns(ctx context.Context, c *client.Client, listing string, q runsQuery, raw bool, now time.Time, stdout, stderr io.Writer) error {
	var all []json.RawMessage
	more := false
	for cursor := ""; len(all) < q.limit; {
		v := url.Values{"limit": {strconv.Itoa(min(q.limit-len(all), 1000))}}
		for k, x := range map[string]string{"status": q.status, "since": q.since, "cursor": cursor} {
			if x != "" {
				v.Set(k, x)
			}
		}
		var page struct {
			Invocations []json.RawMessage
			NextCursor  string `json:"next_cursor"`
		}
		if err := c.Do(ctx, "GET", listing+"?"+v.Encode(), nil, &page); err != nil {
			return err
		}
		all = append(all, page.Invocations...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
		more = len(all) >= q.limit
	}
	if raw {
		b, err := json.MarshalIndent(map[string]any{"invocations": all}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	if len(all) == 0 {
		fmt.Fprintln(stderr, "no invocations"+q.describe())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tINVOCATION\tOCCURRENCE\tSTATUS\tATTEMPT\tDURATION\tMESSAGE")
	for _, b := range all {
		var r cliRun
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.JobID, r.ID, r.Occurrence.UTC().Format(time.RFC3339), runStatus(r), attempt(r), duration(r, now), shorten(r.Message, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more {
		fmt.Fprintf(stderr, "(the newest %d; --limit N for more)\n", q.limit)
	}
	return nil
}

// runStatus is the status, and for a skip record its reason and how many
// occurrences it stands for.
func runStatus(r cliRun) string {
	switch {
	case r.Status != "SKIPPED" || r.Reason == "":
		return r.Status
	case r.Count > 1:
		return fmt.Sprintf("SKIPPED (%s, %d times)", r.Reason, r.Count)
	}
	return "SKIPPED (" + r.Reason + ")"
}

func attempt(r cliRun) string {
	if r.Attempt == 0 {
		return "-"
	}
	return strconv.Itoa(r.Attempt)
}

// duration is how long the attempt ran, or has run so far ("so far"
// then), "-" before it started.
func duration(r cliRun, now time.Time) string {
	switch {
	case r.Started == nil:
		return "-"
	case r.Ended != nil:
		return roundDuration(r.Ended.Sub(*r.Started))
	}
	return roundDuration(now.Sub(*r.Started)) + " so far"
}

// roundDuration is d to the second, or to the millisecond under one.
func roundDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// shorten is s on one line, cut to n characters with "..." if longer.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-3]) + "..."
}
