// Package cli is the sundial command's verbs that call a server's API
// (jobs, trigger, pause, resume, abort, backfill, whoami, config status)
// and make static tokens: flags in, the API's answers printed readably,
// exit statuses a script can rely on. cmd/sundial dispatches to them.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/client"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/web/signin"
)

// apiFlags are the flags every API verb takes.
type apiFlags struct {
	server, tokenFile string
	timeout           time.Duration
}

// Usage lists the verbs of this package, for the command's usage.
const Usage = `  sundial jobs PROJECT [--json] [API flags]
  sundial trigger PROJECT/JOB [API flags]
  sundial pause PROJECT/JOB --reason "..." [--until RFC3339] [API flags]
  sundial resume PROJECT/JOB [API flags]
  sundial pause PROJECT --all|--prefix P [--state S] --reason "..." [API flags]
  sundial resume PROJECT --all|--prefix P [--paused-for REASON] [API flags]
  sundial abort PROJECT/JOB [API flags]
  sundial backfill PROJECT/JOB --from T --to T [API flags]   (T in RFC 3339: 2026-11-01T00:00:00Z)
  sundial backfill PROJECT/JOB --cancel [API flags]
  sundial whoami [--json] [API flags]
  sundial config status [--json] [API flags]
      API flags: --server URL (default http://127.0.0.1:8080) --token-file FILE (default: $SUNDIAL_TOKEN) --timeout D
  sundial token new --identity serviceAccount:EMAIL|user:EMAIL
`

// ExitUsage is the status for bad input, so scripts can tell it from a
// failure of the service.
const ExitUsage = 2

// Run runs "sundial jobs|trigger|pause|resume|abort|backfill|whoami|config status": it
// calls the server's API and prints the answer readably; the API's error
// goes to stderr with exit status 1.
func Run(verb string, args []string, stdout, stderr io.Writer) int {
	// Everything printed may hold what a config's author or a caller
	// wrote: no escape sequence of theirs reaches the terminal.
	stdout, stderr = &inert{w: stdout}, &inert{w: stderr}
	fs := flag.NewFlagSet("sundial "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f apiFlags
	fs.StringVar(&f.server, "server", "http://127.0.0.1:8080", "the server's URL")
	fs.StringVar(&f.tokenFile, "token-file", "", "a file holding the bearer token (default: $SUNDIAL_TOKEN; none: call without one)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long to wait for the server")
	reason, until := "", ""
	if verb == "pause" {
		fs.StringVar(&reason, "reason", "", "why the job is paused (required; shown with the job)")
		fs.StringVar(&until, "until", "", "with PROJECT/JOB: resume it by itself at this time, RFC 3339 (2026-11-01T09:00:00Z)")
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
	raw := false
	if verb == "config" || verb == "jobs" || verb == "whoami" {
		fs.BoolVar(&raw, "json", false, "print the API's JSON, for scripts")
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return ExitUsage
	}
	want := 1
	if verb == "whoami" {
		want = 0
	}
	if len(pos) != want {
		fmt.Fprintf(stderr, "sundial %s: want %d argument(s), got %d\n%s", verb, want, len(pos), Usage)
		return ExitUsage
	}
	var project, job string
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
	case "whoami":
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
		if job == "" {
			fmt.Fprintf(stderr, "sundial pause: --until goes with a PROJECT/JOB\n")
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
	jobPath := "/api/v1/projects/" + url.PathEscape(project) + "/jobs/" + url.PathEscape(job)
	switch {
	case job == "" && (verb == "pause" || verb == "resume"):
		body := map[string]any{"prefix": bulk.prefix}
		if verb == "pause" {
			body["reason"], body["state"] = reason, bulk.state
		} else {
			body["paused_for"] = bulk.pausedFor
		}
		err = bulkChange(ctx, c, verb, project, body, stdout)
	case verb == "whoami" && raw:
		var v json.RawMessage
		if err = c.Do(ctx, "GET", "/api/v1/whoami", nil, &v); err == nil {
			fmt.Fprintf(stdout, "%s\n", v)
		}
	case verb == "whoami":
		var v struct{ Identity string }
		err = c.Do(ctx, "GET", "/api/v1/whoami", nil, &v)
		if err == nil {
			fmt.Fprintln(stdout, v.Identity)
		}
	case verb == "jobs" && raw:
		err = printJobsJSON(ctx, c, project, stdout)
	case verb == "jobs":
		err = printJobs(ctx, c, project, stdout)
	case verb == "config":
		err = printConfigStatus(ctx, c, raw, stdout)
	case verb == "trigger":
		var v struct {
			Invocation string
			Job        cliJob
		}
		if err = c.Do(ctx, "POST", jobPath+"/trigger", map[string]any{}, &v); err == nil {
			fmt.Fprintf(stdout, "triggered %s: invocation %s\n", v.Job.ID, v.Invocation)
		}
	case verb == "pause":
		var v struct{ Job cliJob }
		body := map[string]any{"reason": reason}
		if until != "" {
			body["until"] = until
		}
		if err = c.Do(ctx, "POST", jobPath+"/pause", body, &v); err == nil {
			fmt.Fprintf(stdout, "%s is %s: %s\n", v.Job.ID, v.Job.State, v.Job.Reason)
			if until != "" {
				fmt.Fprintf(stdout, "it resumes by itself at %s\n", until)
			}
		}
	case verb == "backfill" && backfill.cancel:
		var v struct{ Job cliJob }
		if err = c.Do(ctx, "POST", jobPath+"/cancel-backfill", map[string]any{}, &v); err == nil {
			fmt.Fprintf(stdout, "canceled the backfill of %s\n", v.Job.ID)
		}
	case verb == "backfill":
		var v struct{ Job cliJob }
		if err = c.Do(ctx, "POST", jobPath+"/backfill", map[string]any{"from": backfill.from, "to": backfill.to}, &v); err == nil {
			fmt.Fprintf(stdout, "backfilling %s: its occurrences in [%s, %s) that have no record, one at a time\n", v.Job.ID, backfill.from, backfill.to)
		}
	case verb == "resume", verb == "abort":
		var v struct{ Job cliJob }
		if err = c.Do(ctx, "POST", jobPath+"/"+verb, map[string]any{}, &v); err == nil {
			fmt.Fprintf(stdout, "%s is %s\n", v.Job.ID, v.Job.State)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "sundial %s: %v\n", verb, err)
		return 1
	}
	return 0
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

// bulkChange pauses or resumes a project's jobs, prints each job it changed, and
// a line for the rest. Jobs that failed, or a request that stopped before
// the end, are an error: repeating the command finishes it.
func bulkChange(ctx context.Context, c *client.Client, verb, project string, body map[string]any, stdout io.Writer) error {
	var v struct {
		Changed, Unchanged []string
		Failed             map[string]string
		Incomplete         string
	}
	if err := c.Do(ctx, "POST", "/api/v1/projects/"+url.PathEscape(project)+"/"+verb, body, &v); err != nil {
		return err
	}
	done := map[string]string{"pause": "paused", "resume": "resumed"}[verb]
	for _, id := range v.Changed {
		fmt.Fprintf(stdout, "%s %s\n", done, id)
	}
	fmt.Fprintf(stdout, "%d %s, %d unchanged, %d failed\n", len(v.Changed), done, len(v.Unchanged), len(v.Failed))
	for _, id := range slices.Sorted(maps.Keys(v.Failed)) {
		fmt.Fprintf(stdout, "failed %s: %s\n", id, v.Failed[id])
	}
	switch {
	case v.Incomplete != "":
		return errors.New(v.Incomplete)
	case len(v.Failed) > 0:
		return fmt.Errorf("%d jobs failed; run the command again to retry them", len(v.Failed))
	}
	return nil
}

// cliJob is what the verbs print of a job.
type cliJob struct {
	ID             string
	State          string
	Reason         string
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

// cliProject is a project as GET /api/v1/projects gives it, as far as
// "sundial config status" prints it.
type cliProject struct {
	Project string
	Total   int
	Config  *struct {
		Revision string
		LoadedAt *time.Time `json:"loaded_at"`
		Commit   *struct {
			SHA, Author, Subject, Link string
		}
		Error       string
		ErrorAt     *time.Time `json:"error_at"`
		ErrorCommit string     `json:"error_commit"`
	}
}

// printConfigStatus prints each project's running revision, one a line, and
// under a project whose newest revision is refused, its error and the
// refused commit; raw prints the API's JSON instead.
func printConfigStatus(ctx context.Context, c *client.Client, raw bool, stdout io.Writer) error {
	var answer json.RawMessage
	if err := c.Do(ctx, "GET", "/api/v1/projects", nil, &answer); err != nil {
		return err
	}
	var v struct{ Projects []cliProject }
	if err := json.Unmarshal(answer, &v); err != nil {
		return err
	}
	if raw {
		if _, err := fmt.Fprintf(stdout, "%s\n", answer); err != nil {
			return err
		}
		return refusedRevisions(v.Projects)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tJOBS\tREVISION\tLOADED AT\tAUTHOR\tSUBJECT")
	var refused []cliProject
	for _, p := range v.Projects {
		rev, loaded, author, subject := "-", "-", "-", "-"
		if cf := p.Config; cf != nil {
			if cf.Revision != "" {
				rev = short(cf.Revision)
			}
			if cf.LoadedAt != nil {
				loaded = cf.LoadedAt.UTC().Format(time.RFC3339)
			}
			if cf.Commit != nil {
				author, subject = cf.Commit.Author, cf.Commit.Subject
			}
			if cf.Error != "" {
				refused = append(refused, p)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", p.Project, p.Total, rev, loaded, author, subject)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Errors are long (file:line: field: what was expected, and the
	// commit): each gets lines of its own rather than a column.
	for _, p := range refused {
		cf, at := p.Config, ""
		if cf.ErrorAt != nil {
			at = " at " + cf.ErrorAt.UTC().Format(time.RFC3339)
		}
		refusedCommit := ""
		if cf.ErrorCommit != "" {
			refusedCommit = " commit " + short(cf.ErrorCommit)
		}
		fmt.Fprintf(stdout, "\n%s: newest revision%s refused%s; %s keeps running:\n  %s\n", p.Project, refusedCommit, at, orNone(cf.Revision), cf.Error)
	}
	return refusedRevisions(v.Projects)
}

// refusedRevisions is the error of a config status in which a project's
// newest revision is refused, so that scripts see it in the exit status.
func refusedRevisions(projects []cliProject) error {
	var refused []string
	for _, p := range projects {
		if p.Config != nil && p.Config.Error != "" {
			refused = append(refused, p.Project)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	noun := "projects"
	if len(refused) == 1 {
		noun = "project"
	}
	return fmt.Errorf("the newest revision of %d %s is refused: %s", len(refused), noun, strings.Join(refused, ", "))
}

// short is a revision as people quote it: a commit's (or hash's) first 12
// characters.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func orNone(rev string) string {
	if rev == "" {
		return "no revision"
	}
	return "revision " + short(rev)
}

// RunToken runs "sundial token new --identity ID": it prints a fresh
// static token and the line of the server's token file that maps its
// hash to the identity.
func RunToken(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "new" {
		fmt.Fprintf(stderr, "sundial token: want \"new --identity serviceAccount:EMAIL\"\n%s", Usage)
		return ExitUsage
	}
	fs := flag.NewFlagSet("sundial token new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	idFlag := fs.String("identity", "", "who the token is: serviceAccount:EMAIL or user:EMAIL")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return ExitUsage
	}
	id, err := access.ParseIdentity(*idFlag)
	if err != nil || (id.Kind() != access.KindUser && id.Kind() != access.KindServiceAccount) || fs.NArg() != 0 {
		fmt.Fprintf(stderr, "sundial token new: --identity %q: want serviceAccount:EMAIL or user:EMAIL\n", *idFlag)
		return ExitUsage
	}
	token, line := signin.NewToken(id)
	fmt.Fprintf(stdout, "token: %s\n", token)
	fmt.Fprintf(stdout, "line for the server's --static-tokens-file (it holds only the token's hash):\n%s\n", line)
	fmt.Fprintln(stderr, "Give the token to its holder now: it is shown once and the server keeps only its hash.")
	return 0
}
