package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/sundial-cron/sundial/client"
)

// cliJob is what the verbs print of a job.
type cliJob struct {
	ID             string
	State          string
	Reason         string
	PausedUntil    string `json:"paused_until"`
	Schedule       string
	NextFireTime   *time.Time `json:"next_fire_time"`
	LastInvocation *struct {
		ID     string
		Status string
	} `json:"last_invocation"`
}

// eachJobsPage calls fn with every page of the project's jobs, as the API
// gives them, decoded into T.
func eachJobsPage[T any](ctx context.Context, c *client.Client, project string, fn func([]T)) error {
	for cursor := ""; ; {
		q := url.Values{"limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Jobs       []T
			NextCursor string `json:"next_cursor"`
		}
		if err := c.Do(ctx, "GET", "/api/v1/projects/"+url.PathEscape(project)+"/jobs?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		fn(page.Jobs)
		if cursor = page.NextCursor; cursor == "" {
			return nil
		}
	}
}

// printJobs prints every job of the project, one a line.
func printJobs(ctx context.Context, c *client.Client, project string, stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATE\tSCHEDULE\tNEXT\tLAST\tREASON")
	err := eachJobsPage(ctx, c, project, func(jobs []cliJob) {
		for _, j := range jobs {
			next, last := "-", "-"
			if j.NextFireTime != nil {
				next = j.NextFireTime.UTC().Format(time.RFC3339)
			}
			if j.LastInvocation != nil {
				last = j.LastInvocation.ID + " " + j.LastInvocation.Status
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.State, j.Schedule, next, last, j.Reason)
		}
	})
	if err != nil {
		return err
	}
	return tw.Flush()
}

// printJobsJSON prints every job of the project as the API gives them,
// all pages in one {"jobs": [...]}.
func printJobsJSON(ctx context.Context, c *client.Client, project string, stdout io.Writer) error {
	var all []json.RawMessage
	if err := eachJobsPage(ctx, c, project, func(jobs []json.RawMessage) { all = append(all, jobs...) }); err != nil {
		return err
	}
	b, err := json.MarshalIndent(map[string]any{"jobs": all}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}
