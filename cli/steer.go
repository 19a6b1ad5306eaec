package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sundial-cron/sundial/client"
)

// steerAnswer is what trigger, pause, resume and abort answer of one job:
// the job after the request, and what the request did.
type steerAnswer struct {
	Job        cliJob
	Invocation string
	// Outcome is a trigger's: queued, waiting or skipped.
	Outcome    string
	SkipReason string `json:"skip_reason"`
	// Replaced are the invocations a trigger replaced, Aborted those an
	// abort ended.
	Replaced, Aborted []struct {
		ID      string
		Attempt int
	}
	// Changed is a pause's or a resume's: false when the job was as
	// asked already.
	Changed        *bool
	PreviousReason string `json:"previous_reason"`
}

// skipWhy says why a trigger's occurrence was skipped, by its reason.
var skipWhy = map[string]string{
	"overrun": "another invocation is under way, and the job's overlap policy skips",
}

// steer triggers, pauses, resumes or aborts one job and prints what
// happened; a request that changed nothing, or a trigger that will not
// run, says so and exits ExitUnchanged.
func steer(ctx context.Context, c *client.Client, verb, jobPath, reason, until string, raw bool, stdout io.Writer) (int, error) {
	body := map[string]any{}
	if verb == "pause" {
		body["reason"] = reason
		if until != "" {
			body["until"] = until
		}
	}
	var v steerAnswer
	if err := call(ctx, c, "POST", jobPath+"/"+verb, body, raw, stdout, &v, func() { printSteered(verb, v, stdout) }); err != nil {
		return 0, err
	}
	if unchanged(verb, v) {
		return ExitUnchanged, nil
	}
	return 0, nil
}

// unchanged tells a request that changed nothing, or a trigger that runs
// nothing.
func unchanged(verb string, v steerAnswer) bool {
	switch verb {
	case "trigger":
		return v.Outcome == "skipped"
	case "abort":
		return len(v.Aborted) == 0
	}
	return v.Changed != nil && !*v.Changed
}

func printSteered(verb string, v steerAnswer, stdout io.Writer) {
	id := v.Job.ID
	switch verb {
	case "trigger":
		switch v.Outcome {
		case "skipped":
			why := skipWhy[v.SkipReason]
			if why == "" {
				why = "the job's overlap policy"
			}
			fmt.Fprintf(stdout, "triggered %s: invocation %s will not run: skipped (%s): %s\n", id, v.Invocation, v.SkipReason, why)
		case "waiting":
			fmt.Fprintf(stdout, "triggered %s: invocation %s waits for the one under way to end (overlap queue_one)\n", id, v.Invocation)
		default:
			var replaced []string
			for _, r := range v.Replaced {
				replaced = append(replaced, fmt.Sprintf("%s (attempt %d)", r.ID, r.Attempt))
			}
			if len(replaced) > 0 {
				fmt.Fprintf(stdout, "triggered %s: invocation %s, which aborted %s (overlap replace)\n", id, v.Invocation, strings.Join(replaced, ", "))
			} else {
				fmt.Fprintf(stdout, "triggered %s: invocation %s\n", id, v.Invocation)
			}
		}
	case "pause":
		switch {
		case unchanged(verb, v):
			fmt.Fprintf(stdout, "%s was already %s: %s\n", id, v.Job.State, v.Job.Reason)
		case v.PreviousReason != "":
			fmt.Fprintf(stdout, "%s is %s: %s (was: %s)\n", id, v.Job.State, v.Job.Reason, v.PreviousReason)
		default:
			fmt.Fprintf(stdout, "%s is %s: %s\n", id, v.Job.State, v.Job.Reason)
		}
		if v.Job.PausedUntil != "" {
			fmt.Fprintf(stdout, "it resumes by itself at %s\n", v.Job.PausedUntil)
		}
	case "resume":
		if unchanged(verb, v) {
			fmt.Fprintf(stdout, "%s was not paused: it is %s\n", id, v.Job.State)
		} else {
			fmt.Fprintf(stdout, "%s is %s\n", id, v.Job.State)
		}
	case "abort":
		if len(v.Aborted) == 0 {
			fmt.Fprintf(stdout, "nothing to abort: %s has no unfinished invocation\n", id)
		}
		for _, a := range v.Aborted {
			fmt.Fprintf(stdout, "aborted %s: invocation %s (attempt %d)\n", id, a.ID, a.Attempt)
		}
	}
}
