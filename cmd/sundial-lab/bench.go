package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/lab/loadtest"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/task/local"
)

// runBench runs "sundial-lab bench [flags]": N noop jobs on every-minute
// schedules through the real engine, store, dispatcher and watchdog in real
// time, printing one JSON report. It exits 1 when an expected occurrence
// did not launch or was skipped as missed.
func runBench(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("sundial-lab bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts loadtest.Options
	fs.IntVar(&opts.Jobs, "jobs", 1000, "how many jobs, each on "+loadtest.Schedule)
	fs.IntVar(&opts.Minutes, "minutes", 3, "measured minutes, after a warm-up minute")
	fs.StringVar(&opts.DB, "db", "", "database file (default: a temporary one, removed afterwards)")
	syncMode := fs.String("sync", "full", "SQLite synchronous setting: full (the production setting) or normal")
	backend := fs.String("backend", "embedded", "the store: embedded (SQLite) or postgres")
	maxConns := fs.Int("database-max-conns", 0, "postgres: each instance's connections at most (default: serve's)")
	fs.IntVar(&opts.Instances, "instances", 1, "postgres: engines with their own pools and dispatchers over the one database, as instances of the PostgreSQL shape")
	fs.StringVar(&opts.DatabaseURL, "database-url", "", "postgres: the database (default: a private server started in a temporary directory, durable as in production, and measured too)")
	fs.DurationVar(&opts.Warmup, "warmup", time.Minute, "unmeasured run before the measured minutes")
	fs.IntVar(&opts.Workers, "workers", 0, "dispatcher workers (default: the dispatcher's)")
	fs.DurationVar(&opts.Ahead, "ahead", local.DefaultAhead, "how long before their time tasks are claimed, and launches committed (0: at their time)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile taken at the end of the measured minutes to this file")
	serve := fs.Bool("serve", false, "measure the whole of sundial serve, with its own settings and defaults: url_fetch jobs from config files calling a receiver in this process")
	verbose := fs.Bool("v", false, "log the engine's and dispatcher's warnings to stderr")
	soak := fs.Duration("soak", 0, "instead, run --jobs every-second jobs for this long with a short retention, printing the database's size and the memory as CSV every --soak-sample")
	soakSample := fs.Duration("soak-sample", 10*time.Second, "how often the soak samples")
	soakRetention := engine.Retention{Age: 2 * time.Minute, Count: 60, FailureAge: 5 * time.Minute, FailureCount: 60}
	fs.DurationVar(&soakRetention.Age, "soak-retention-age", soakRetention.Age, "the soak jobs' retention age (failures: this and --soak-retention-count too)")
	fs.IntVar(&soakRetention.Count, "soak-retention-count", soakRetention.Count, "the soak jobs' retention count")
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sundial-lab bench: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	switch *syncMode {
	case "full":
		opts.Sync = sqlite.SyncFull
	case "normal":
		opts.Sync = sqlite.SyncNormal
	default:
		fmt.Fprintf(stderr, "sundial-lab bench: --sync %q: want full or normal\n", *syncMode)
		return exitUsage
	}
	switch *backend {
	case "embedded":
	case "postgres":
		opts.Postgres, opts.MaxConns = true, int32(*maxConns)
	default:
		fmt.Fprintf(stderr, "sundial-lab bench: --backend %q: want embedded or postgres\n", *backend)
		return exitUsage
	}
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	opts.Now = now
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
		return 1
	}
	defer stopProfile()
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
			return 1
		}
		defer f.Close()
		opts.HeapProfile = f
	}
	if *serve {
		return benchServe(context.Background(), opts, stdout, stderr)
	}
	if *soak > 0 {
		soakRetention.FailureAge, soakRetention.FailureCount = soakRetention.Age, soakRetention.Count
		_, err := loadtest.Soak(context.Background(), loadtest.SoakOptions{
			Jobs: opts.Jobs, Duration: *soak, Retention: soakRetention, Sample: *soakSample,
			DB: opts.DB, Sync: opts.Sync, Workers: opts.Workers, Now: now, Out: stdout,
		})
		if err != nil {
			fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
			return 1
		}
		return 0
	}
	rep, err := loadtest.Run(context.Background(), opts)
	if errors.Is(err, loadtest.ErrBadOptions) {
		fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
		return 1
	}
	return printReport("bench", rep, "occurrences were missed or repeated", stdout, stderr)
}
