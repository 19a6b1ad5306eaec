// Command sundial is the one binary Sundial ships: the server and its tools.
// The lab (the simulator and the benchmarks) is cmd/sundial-lab, which this
// binary never links.
//
//	sundial serve                   run Sundial: the embedded default, --backend=postgres or cloud
//	sundial validate DIR_OR_FILE... check project configs (and --calendars), listing every error
//	sundial schedule next EXPR      print the next fire times of a schedule
//	sundial schedule explain EXPR   explain a schedule in words
//	sundial diff OLD NEW            what a config change does: jobs, fire times, herds
//	sundial setup-gcp               create or update the Cloud Run queue and scheduler jobs
//	sundial backup FILE             copy the embedded shape's database while it runs
//	sundial migrate [--dry-run]     bring the PostgreSQL shape's schema to this release's
//	sundial jobs PROJECT            list a project's jobs, through a server's API
//	sundial runs PROJECT[/JOB]      list its invocations across jobs, newest first
//	sundial logs PROJECT/JOB/INV    print an invocation's log; -f follows it to its end
//	sundial describe PROJECT/JOB    a job's definition, state, next and last runs
//	sundial trigger|pause|resume|abort PROJECT/JOB
//	sundial pause|resume PROJECT --all|--prefix P
//	sundial backfill PROJECT/JOB --from T --to T | --cancel
//	                                steer a job through a server's API
//	sundial whoami                  who a server takes the caller for
//	sundial instances               the PostgreSQL shape's instances, and whose settings differ
//	sundial config status           each project's config revision and its last error
//	sundial token new               make a static token for a machine
//	sundial version                 which build this is: version, commit, Go
//
// Bad input exits with status 2 and the error on stderr; the API verbs'
// other exit statuses are in cli.Usage and docs/cli.md.
package main

import (
	"fmt"
	"io"
	"os"
	"time"
	_ "time/tzdata" // schedules name IANA zones; do not depend on the host's copy

	"github.com/sundial-cron/sundial/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

const usage = `usage:
  sundial serve [flags]
  sundial validate [--calendars PATH] [--json] DIR_OR_FILE...
` + cli.ScheduleUsage + cli.DiffUsage + `  sundial backup [--db PATH] FILE
  sundial migrate [--database-url URL] [--dry-run]
  sundial setup-gcp [--gcp-project P] [--location L] [--queue Q] [--public-url URL] [--invoker SA] [--dry-run]
` + cli.Usage + `  sundial version [--json]     (or sundial --version)
`

// exitUsage is the status for bad input, so scripts can tell it from a
// failure of the service.
const exitUsage = cli.ExitUsage

// run is main without the process: it takes the arguments, the output
// streams and the clock, and returns the exit status.
func run(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "validate":
		return runValidate(args[1:], stdout, stderr)
	case "schedule":
		return cli.RunSchedule(args[1:], stdout, stderr, now)
	case "serve":
		return runServe(args[1:], stdout, stderr, now)
	case "setup-gcp":
		return runSetupGCP(args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(args[1:], stdout, stderr)
	case "backup":
		return runBackup(args[1:], stdout, stderr, now)
	case "jobs", "runs", "logs", "describe", "trigger", "pause", "resume", "abort", "backfill", "whoami", "instances", "config":
		return cli.Run(args[0], args[1:], stdout, stderr, now)
	case "diff":
		return cli.RunDiff(args[1:], stdout, stderr, now)
	case "token":
		return cli.RunToken(args[1:], stdout, stderr)
	case "version", "--version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "sundial: unknown command %q\n%s", args[0], usage)
	return exitUsage
}
