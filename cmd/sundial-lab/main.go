// Command sundial-lab is Sundial's lab: the simulator and the benchmarks,
// kept out of the shipped `sundial` binary.
//
//	sundial-lab simulate   run the engine on a simulated clock with faults
//	sundial-lab bench      measure the engine in real time, or soak it
//
// The other lab tools are programs of their own under lab/: the SQLite
// floor (lab/floor), the soak's chart (lab/soakchart) and the River
// comparison (lab/river, a module of its own, and lab/compare).
//
// Bad input exits with status 2 and the error on stderr.
package main

import (
	"fmt"
	"io"
	"os"
	"time"
	_ "time/tzdata" // the simulator's schedules name IANA zones; do not depend on the host's copy
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

const usage = `usage:
  sundial-lab simulate [--jobs N] [--days D] [--seed S] [--faults none|default|heavy] [--backend sqlite|datastore] [--dir DIR] [--cpuprofile FILE]
  sundial-lab bench [--jobs N] [--minutes M] [--db PATH] [--sync full|normal] [--workers W] [--warmup D] [--ahead D] [--cpuprofile FILE] [--memprofile FILE] [-v] [--soak D [--soak-sample D] [--soak-retention-age D] [--soak-retention-count N]]
`

// exitUsage is the status for bad input, so scripts can tell it from a
// failed run.
const exitUsage = 2

// run is main without the process: it takes the arguments, the output
// streams and the clock, and returns the exit status.
func run(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "simulate":
		return runSimulate(args[1:], stdout, stderr, now)
	case "bench":
		return runBench(args[1:], stdout, stderr, now)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "sundial-lab: unknown command %q\n%s", args[0], usage)
	return exitUsage
}
