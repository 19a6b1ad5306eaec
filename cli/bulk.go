package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"

	"github.com/sundial-cron/sundial/client"
)

// bulkChange pauses or resumes a project's jobs, prints each job it changed, and
// a line for the rest. Jobs that failed, or a request that stopped before
// the end, are an error: repeating the command finishes it. A request that
// changed no job exits ExitUnchanged; a resume by reason that matched none
// lists the reasons the paused jobs have.
func bulkChange(ctx context.Context, c *client.Client, verb, project string, body map[string]any, raw bool, stdout io.Writer) (int, error) {
	var v struct {
		Changed, Unchanged []string
		Failed             map[string]string
		Incomplete         string
		OtherReasons       map[string]int `json:"other_reasons"`
	}
	done := map[string]string{"pause": "paused", "resume": "resumed"}[verb]
	err := call(ctx, c, "POST", "/api/v1/projects/"+url.PathEscape(project)+"/"+verb, body, raw, stdout, &v, func() {
		for _, id := range v.Changed {
			fmt.Fprintf(stdout, "%s %s\n", done, id)
		}
		fmt.Fprintf(stdout, "%d %s, %d unchanged, %d failed\n", len(v.Changed), done, len(v.Unchanged), len(v.Failed))
		for _, id := range slices.Sorted(maps.Keys(v.Failed)) {
			fmt.Fprintf(stdout, "failed %s: %s\n", id, v.Failed[id])
		}
		if pausedFor, _ := body["paused_for"].(string); pausedFor != "" && len(v.Changed) == 0 {
			if len(v.OtherReasons) == 0 {
				fmt.Fprintf(stdout, "no job of %s is paused for %q, nor for any other reason\n", project, pausedFor)
			} else {
				fmt.Fprintf(stdout, "no job of %s is paused for %q; the paused jobs' reasons:\n", project, pausedFor)
			}
			for _, r := range slices.Sorted(maps.Keys(v.OtherReasons)) {
				fmt.Fprintf(stdout, "  %q (%s)\n", r, plural(v.OtherReasons[r], "job"))
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case v.Incomplete != "":
		return 0, errors.New(v.Incomplete)
	case len(v.Failed) > 0:
		return 0, fmt.Errorf("%d jobs failed; run the command again to retry them", len(v.Failed))
	case len(v.Changed) == 0:
		return ExitUnchanged, nil
	}
	return 0, nil
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
