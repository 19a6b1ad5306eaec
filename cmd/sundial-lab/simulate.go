package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sundial-cron/sundial/internal/emulator"
	"github.com/sundial-cron/sundial/lab/simulate"
)

// runSimulate runs "sundial-lab simulate [flags]": the real engine on a
// simulated clock with faults, printing one JSON report. It exits 1 when the
// run broke a guarantee (a double launch, a stuck job, an unaccounted
// occurrence), so it can gate CI.
func runSimulate(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("sundial-lab simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts simulate.Options
	fs.IntVar(&opts.Jobs, "jobs", 2000, "how many jobs")
	fs.IntVar(&opts.Days, "days", 3, "how many simulated days")
	fs.Uint64Var(&opts.Seed, "seed", 1, "seed of every random choice; a seed always gives the same jobs and faults")
	fs.StringVar(&opts.Faults, "faults", "default", "fault level: none, default or heavy")
	fs.StringVar(&opts.Backend, "backend", "sqlite", "store and task queue: sqlite (embedded) or datastore (the Datastore emulator at $"+emulator.EnvHost+", or one started and stopped here, and a queue that behaves as Cloud Tasks does)")
	fs.StringVar(&opts.Dir, "dir", "", "directory for the SQLite database file (default: a temporary one, removed afterwards)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial-lab simulate: %v\n", err)
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sundial-lab simulate: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if opts.Backend == "datastore" {
		stop, err := datastoreEmulator(&opts)
		if err != nil {
			fmt.Fprintf(stderr, "sundial-lab simulate: %v\n", err)
			return 1
		}
		defer stop()
	}
	opts.WallClock = now
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		fmt.Fprintf(stderr, "sundial-lab simulate: %v\n", err)
		return 1
	}
	defer stopProfile()
	rep, err := simulate.Run(context.Background(), opts)
	if errors.Is(err, simulate.ErrBadOptions) {
		fmt.Fprintf(stderr, "sundial-lab simulate: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "sundial-lab simulate: %v\n", err)
		return 1
	}
	return printReport("simulate", rep, "a guarantee was broken", stdout, stderr)
}

// datastoreEmulator points opts at the emulator $DATASTORE_EMULATOR_HOST
// names, or starts one (serving every query: the index checks are the
// tests' job) and returns what stops it.
func datastoreEmulator(opts *simulate.Options) (stop func(), err error) {
	if host := os.Getenv(emulator.EnvHost); host != "" {
		opts.DatastoreEmulator = host
		return func() {}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := emulator.Start(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("starting the Datastore emulator (or set %s): %w", emulator.EnvHost, err)
	}
	opts.DatastoreEmulator = p.Host
	return func() { _ = p.Stop() }, nil
}
