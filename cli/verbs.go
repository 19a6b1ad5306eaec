// Package cli is the sundial command's verbs that call a server's API
// (jobs, runs, logs, describe, trigger, pause, resume, abort, backfill,
// whoami, config status), make static tokens, and the verbs that ask no
// server (schedule, diff): flags in, the answers printed readably or as
// JSON, exit statuses a script can rely on (docs/cli.md). cmd/sundial
// dispatches to them.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/client"
	"github.com/sundial-cron/sundial/jobid"
)

// apiFlags are the flags every API verb takes.
type apiFlags struct {
	server, tokenFile string
	timeout           time.Duration
}

// Usage lists the verbs of this package, for the command's usage.
const Usage = `  sundial jobs PROJECT [--json] [API flags]
  sundial runs PROJECT[/JOB] [--status failed|running|succeeded|skipped] [--since AGE|TIME] [--limit N] [--json] [API flags]
  sundial logs PROJECT/JOB/INVOCATION [-f] [--json] [API flags]
  sundial describe PROJECT/JOB [--json] [API flags]
  sundial trigger PROJECT/JOB [--json] [API flags]
  sundial pause PROJECT/JOB --reason "..." [--until RFC3339] [--json] [API flags]
  sundial resume PROJECT/JOB [--json] [API flags]
  sundial pause PROJECT --all|--prefix P [--state S] --reason "..." [--until RFC3339] [--json] [API flags]
  sundial resume PROJECT --all|--prefix P [--paused-for REASON] [--json] [API flags]
  sundial abort PROJECT/JOB [--json] [API flags]
  sundial backfill PROJECT/JOB --from T --to T [--json] [API flags]   (T in RFC 3339: 2026-11-01T00:00:00Z)
  sundial backfill PROJECT/JOB --cancel [--json] [API flags]
  sundial whoami [--json] [API flags]
  sundial instances [--json] [API flags]   (the PostgreSQL shape's instances; administrators)
  sundial config status [--json] [API flags]
      API flags: --server URL (default http://127.0.0.1:8080) --token-file FILE (default: $SUNDIAL_TOKEN) --timeout D
      exit status: 0 done; 1 the server refused or failed (or config status: a refused revision;
      instances: an instance alive given other settings);
      2 bad input, nothing called; 3 nothing changed (a trigger skipped, a pause or resume with nothing
      to do, an abort with nothing running); 4 logs -f: the invocation ended FAILED or ABORTED
  sundial token new --identity serviceAccount:EMAIL|user:EMAIL
`

// Exit statuses of the API verbs, which scripts can rely on (Usage says
// them, docs/cli.md too).
const (
	// ExitFailure: the server refused the request or failed, or could
	// not be reached; or config status found a refused revision.
	ExitFailure = 1
	// ExitUsage is the status for bad input, so scripts can tell it from
	// a failure of the service: nothing was called.
	ExitUsage = 2
	// ExitUnchanged: the server took the request, and it changed nothing
	// (a trigger the overlap policy skips, a pause of a job paused for
	// that reason, a resume of a job not paused, an abort with nothing
	// unfinished, a bulk request that matched nothing).
	ExitUnchanged = 3
	// ExitRunFailed: logs -f followed an invocation that ended FAILED or
	// ABORTED (one that was skipped is ExitUnchanged).
	ExitRunFailed = 4
)

// Run runs "sundial jobs|runs|logs|describe|trigger|pause|resume|abort|
// backfill|whoami|instances|config status": it calls the server's API and prints the
// answer readably, or as the API's JSON with --json; the API's error goes
// to stderr with exit status 1. The exit statuses are ExitFailure and
// those after it.
func Run(verb string, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	// Everything printed may hold what a config's author or a caller
	// wrote: no escape sequence of theirs reaches the terminal.
	stdout, stderr = &inert{w: stdout}, &inert{w: stderr}
	fs := flag.NewFlagSet("sundial "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f apiFlags
	fs.StringVar(&f.server, "server", "http://127.0.0.1:8080", "the server's URL")
	fs.StringVar(&f.tokenFile, "token-file", "", "a file holding the bearer token (default: $SUNDIAL_TOKEN; none: call without one)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long to wait for the server, per request")
	reason, until := "", ""
	if verb == "pause" {
		fs.StringVar(&reason, "reason", "", "why the job is paused (required; shown with the job)")
		fs.StringVar(&until, "until", "", "resume the jobs it pauses by themselves at this time, RFC 3339 (2026-11-01T09:00:00Z)")
	}
	// A bulk pause or resume names a project and says which of its jobs:
	// --all, or a --prefix, so that a forgotten "/JOB" cannot stop them all.
	var bulk struct {
		all                      bool
		prefix, state, pausedFor string
	}
	if verb == "pause" || verb == "resume" {
		fs.BoolVar(&bulk.all, "all", false, "with PROJECT: every job of the project")
		fs.StringVar(&bulk.prefix, "prefix", "", "with PROJECT: the jobs whose name starts with this")
	}
	if verb == "pause" {
		fs.StringVar(&bulk.state, "state", "", "with PROJECT: only the jobs in this state (SCHEDULED, RUNNING, ...)")
	}
	if verb == "resume" {
		fs.StringVar(&bulk.pausedFor, "paused-for", "", "with PROJECT: only the jobs paused with exactly this reason")
	}
	var backfill struct {
		from, to string
		cancel   bool
	}
	if verb == "backfill" {
		fs.StringVar(&backfill.from, "from", "", "the first instant of the range, RFC 3339")
		fs.StringVar(&backfill.to, "to", "", "the end of the range (not included), RFC 3339")
		fs.BoolVar(&backfill.cancel, "cancel", false, "stop the job's backfill instead: what it has not started is not started")
	}
	var runs runsQuery
	if verb == "runs" {
		fs.StringVar(&runs.status, "status", "", "only the invocations of this status: failed (FAILED, ABORTED), running, succeeded or skipped")
		fs.StringVar(&runs.since, "since", "", "only the occurrences from this long ago (90m, 24h, 7d) or this time (RFC 3339) on")
		fs.IntVar(&runs.limit, "limit", 20, "print at most this many, the newest")
	}
	var follow followFlags
	if verb == "logs" {
		fs.BoolVar(&follow.on, "f", false, "follow a running invocation until it ends; the exit status says how it ended")
		fs.BoolVar(&follow.on, "follow", false, "the same as -f")
		fs.DurationVar(&follow.every, "interval", 2*time.Second, "with -f: how often to ask the server")
	}
	raw := false
	fs.BoolVar(&raw, "json", false, "print the API's JSON, for scripts")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return ExitUsage
	}
	want := 1
	if verb == "whoami" || verb == "instances" {
		want = 0
	}
	if len(pos) != want {
		fmt.Fprintf(stderr, "sundial %s: want %d argument(s), got %d\n%s", verb, want, len(pos), Usage)
		return ExitUsage
	}
	var project, job, invocation string
	switch verb {
	case "config":
		if pos[0] != "status" {
			fmt.Fprintf(stderr, "sundial config %s: unknown; want: sundial config status\n", pos[0])
			return ExitUsage
		}
	case "jobs":
		project = pos[0]
		if project == "" || strings.Contains(project, "/") {
			fmt.Fprintf(stderr, "sundial jobs: %q: want a project name\n", project)
			return ExitUsage
		}
	case "whoami", "instances":
	case "runs":
		if project = pos[0]; strings.Contains(project, "/") {
			id, err := jobid.Parse(pos[0])
			if err != nil {
				fmt.Fprintf(stderr, "sundial runs: %q: want PROJECT or PROJECT/JOB\n", pos[0])
				return ExitUsage
			}
			project, job = id.Project, id.Job
		}
		if project == "" {
			fmt.Fprintf(stderr, "sundial runs: %q: want PROJECT or PROJECT/JOB\n", pos[0])
			return ExitUsage
		}
		if err := runs.check(); err != nil {
			fmt.Fprintf(stderr, "sundial runs: %v\n", err)
			return ExitUsage
		}
	case "logs":
		parts := strings.Split(pos[0], "/")
		if len(parts) != 3 || slices.Contains(parts, "") {
			fmt.Fprintf(stderr, "sundial logs: %q: want PROJECT/JOB/INVOCATION (sundial runs lists them)\n", pos[0])
			return ExitUsage
		}
		project, job, invocation = parts[0], parts[1], parts[2]
		if follow.on && raw {
			fmt.Fprintf(stderr, "sundial logs: -f and --json do not go together: -f prints the log as it grows\n")
			return ExitUsage
		}
		if follow.every <= 0 {
			fmt.Fprintf(stderr, "sundial logs: --interval %s: want a positive duration\n", follow.every)
			return ExitUsage
		}
	case "pause", "resume":
		if !strings.Contains(pos[0], "/") {
			project = pos[0]
			if project == "" || bulk.all == (bulk.prefix != "") {
				fmt.Fprintf(stderr, "sundial %s %s: name a job (PROJECT/JOB), or say which of the project's jobs: --all or --prefix P\n", verb, project)
				return ExitUsage
			}
			break
		}
		if bulk.all || bulk.prefix != "" || bulk.state != "" || bulk.pausedFor != "" {
			fmt.Fprintf(stderr, "sundial %s %s: --all, --prefix, --state and --paused-for go with a PROJECT, not a job\n", verb, pos[0])
			return ExitUsage
		}
		fallthrough
	default:
		id, err := jobid.Parse(pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "sundial %s: %q: want PROJECT/JOB\n", verb, pos[0])
			return ExitUsage
		}
		project, job = id.Project, id.Job
	}
	if verb == "pause" && strings.TrimSpace(reason) == "" {
		fmt.Fprintf(stderr, "sundial pause: --reason is required: say why, for whoever finds the job paused\n")
		return ExitUsage
	}
	if until != "" {
		if _, err := time.Parse(time.RFC3339, until); err != nil {
			fmt.Fprintf(stderr, "sundial pause: --until %q: want a time in RFC 3339 (2026-11-01T09:00:00Z)\n", until)
			return ExitUsage
		}
	}
	if verb == "backfill" && backfill.cancel == (backfill.from != "" || backfill.to != "") {
		fmt.Fprintf(stderr, "sundial backfill: give --from and --to, or --cancel\n")
		return ExitUsage
	}
	if verb == "backfill" && !backfill.cancel {
		for _, v := range []struct{ name, value string }{{"--from", backfill.from}, {"--to", backfill.to}} {
			if _, err := time.Parse(time.RFC3339, v.value); err != nil {
				fmt.Fprintf(stderr, "sundial backfill: %s %q: want a time in RFC 3339 (2026-11-01T00:00:00Z)\n", v.name, v.value)
				return ExitUsage
			}
		}
	}
	c, err := newClient(f)
	if err != nil {
		fmt.Fprintf(stderr, "sundial %s: %v\n", verb, err)
		return ExitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	projectPath := "/api/v1/projects/" + url.PathEscape(project)
	jobPath := projectPath + "/jobs/" + url.PathEscape(job)
	code := 0
	switch {
	case verb == "logs" && follow.on:
		code, err = follower{c: c, timeout: f.timeout, interval: follow.every, patience: followPatience, now: now, sleep: time.Sleep}.follow(jobPath+"/invocations/"+url.PathEscape(invocation), stdout, stderr)
	case verb == "logs":
		err = printLog(ctx, c, jobPath+"/invocations/"+url.PathEscape(invocation), raw, stdout)
	case verb == "runs":
		listing := projectPath + "/invocations"
		if job != "" {
			listing = jobPath + "/invocations"
		}
		err = printRuns(ctx, c, listing, runs, raw, now(), stdout, stderr)
	case verb == "describe":
		err = describe(ctx, c, jobPath, raw, now(), stdout)
	case job == "" && (verb == "pause" || verb == "resume"):
		body := map[string]any{"prefix": bulk.prefix}
		if verb == "pause" {
			body["reason"], body["state"] = reason, bulk.state
			if until != "" {
				body["until"] = until
			}
		} else {
			body["paused_for"] = bulk.pausedFor
		}
		code, err = bulkChange(ctx, c, verb, project, body, raw, stdout)
	case verb == "whoami":
		var v struct{ Identity string }
		err = call(ctx, c, "GET", "/api/v1/whoami", nil, raw, stdout, &v, func() {
			fmt.Fprintln(stdout, v.Identity)
		})
	case verb == "instances":
		err = printInstances(ctx, c, raw, now(), stdout)
	case verb == "jobs" && raw:
		err = printJobsJSON(ctx, c, project, stdout)
	case verb == "jobs":
		err = printJobs(ctx, c, project, stdout)
	case verb == "config":
		err = printConfigStatus(ctx, c, raw, stdout)
	case verb == "backfill" && backfill.cancel:
		var v struct{ Job cliJob }
		err = call(ctx, c, "POST", jobPath+"/cancel-backfill", map[string]any{}, raw, stdout, &v, func() {
			fmt.Fprintf(stdout, "canceled the backfill of %s\n", v.Job.ID)
		})
	case verb == "backfill":
		var v struct{ Job cliJob }
		err = call(ctx, c, "POST", jobPath+"/backfill", map[string]any{"from": backfill.from, "to": backfill.to}, raw, stdout, &v, func() {
			fmt.Fprintf(stdout, "backfilling %s: its occurrences in [%s, %s) that have no record, one at a time\n", v.Job.ID, backfill.from, backfill.to)
		})
	default:
		code, err = steer(ctx, c, verb, jobPath, reason, until, raw, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sundial %s: %v\n", verb, err)
		return ExitFailure
	}
	return code
}

// call makes a request and, with raw, prints the API's JSON answer as it
// is; otherwise it decodes the answer into v and calls show.
func call(ctx context.Context, c *client.Client, method, path string, body any, raw bool, stdout io.Writer, v any, show func()) error {
	var answer json.RawMessage
	if err := c.Do(ctx, method, path, body, &answer); err != nil {
		return err
	}
	if err := json.Unmarshal(answer, v); err != nil {
		return err
	}
	if raw {
		_, err := fmt.Fprintf(stdout, "%s\n", answer)
		return err
	}
	show()
	return nil
}

// parseInterspersed parses flags wherever they stand among the
// positional arguments ("sundial pause billing/nightly --reason x"), as
// the flag package alone stops at the first positional one.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// newClient is the client the API flags say.
func newClient(f apiFlags) (*client.Client, error) {
	token, err := client.ReadToken(f.tokenFile, os.Getenv)
	if err != nil {
		return nil, err
	}
	return client.New(f.server, token)
}
