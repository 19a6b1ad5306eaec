package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/lab/loadtest"
	"github.com/sundial-cron/sundial/server"
)

// serveBenchProjects is how many project files the jobs are spread over.
const serveBenchProjects = 100

// serveBenchDrain is how long the run goes on after the measured minutes
// for their last occurrences to arrive.
const serveBenchDrain = 30 * time.Second

// benchServe runs "sundial-lab bench --serve": the whole of `sundial serve` in
// this process (config files, the refresher, the API and metrics, the
// url_fetch target over loopback HTTP) with opts.Jobs jobs that call a
// receiver in this process every minute, and reports what the receiver
// saw. It measures what a job's owner would: scheduled time to request
// received.
func benchServe(ctx context.Context, opts loadtest.Options, stdout, stderr io.Writer) int {
	if opts.Jobs <= 0 || opts.Minutes <= 0 {
		fmt.Fprintln(stderr, "sundial-lab bench: --jobs and --minutes must be positive")
		return exitUsage
	}
	dir, err := os.MkdirTemp("", "sundial-bench-serve-")
	if err != nil {
		fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	recv := &loadtest.Receiver{Now: opts.Now}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
		return 1
	}
	rsrv := &http.Server{Handler: recv, ReadHeaderTimeout: 10 * time.Second}
	go rsrv.Serve(ln)
	defer rsrv.Close()

	configs := filepath.Join(dir, "configs")
	if err := writeBenchConfigs(configs, opts.Jobs, "http://"+ln.Addr().String()+"/"); err != nil {
		fmt.Fprintf(stderr, "sundial-lab bench: %v\n", err)
		return 1
	}
	db := opts.DB
	if db == "" {
		db = filepath.Join(dir, "sundial.db")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := benchSettings(db, configs, opts)
	start := opts.Now().Add(opts.Warmup).Truncate(time.Minute).Add(time.Minute)
	end := start.Add(time.Duration(opts.Minutes) * time.Minute)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- server.Run(runCtx, s, logger, opts.Now) }()
	timer := time.NewTimer(end.Add(serveBenchDrain).Sub(opts.Now()))
	defer timer.Stop()
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "sundial-lab bench: serve stopped early: %v\n", err)
		return 1
	case <-timer.C:
	}
	stop()
	if err := <-served; err != nil {
		fmt.Fprintf(stderr, "sundial-lab bench: serve: %v\n", err)
		return 1
	}
	return printReport("bench", recv.Report(opts.Jobs, start, opts.Minutes), "occurrences were missed or repeated", stdout, stderr)
}

// benchSettings are serve's settings for the benchmark: serve's defaults
// (server.Defaults, in an empty environment), with what the benchmark's
// flags say (the database, its durability, the workers, how far ahead),
// its config directory, any free loopback port, and its receiver on
// loopback allowed, which url_fetch calls only where the operator allows
// it.
func benchSettings(db, configs string, opts loadtest.Options) server.Settings {
	s := server.Defaults(func(string) string { return "" })
	s.DB, s.Sync, s.Workers, s.Ahead = db, opts.Sync, opts.Workers, opts.Ahead
	s.Configs.Dir = configs
	s.Listen = "127.0.0.1:0"
	s.Egress.URLAllow = []string{"127.0.0.1"}
	return s
}

// writeBenchConfigs writes jobs url_fetch jobs over serveBenchProjects
// project files, each firing every minute at a second hashed from its id.
func writeBenchConfigs(dir string, jobs int, url string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := make([]strings.Builder, serveBenchProjects)
	for i := range files {
		files[i].WriteString("jobs:\n")
	}
	for i := range jobs {
		fmt.Fprintf(&files[i%serveBenchProjects], "  - id: job%07d\n    schedule: %q\n    url_fetch: {url: %q}\n", i, loadtest.Schedule, url)
	}
	for i := range files {
		if i >= jobs {
			break
		}
		name := filepath.Join(dir, fmt.Sprintf("bench%03d.yaml", i))
		if err := os.WriteFile(name, []byte(files[i].String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
