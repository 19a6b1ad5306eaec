package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/tools/loadtest"
)

// runBench runs "sundial bench [flags]": N noop jobs on every-minute
// schedules through the real engine, store, dispatcher and watchdog in real
// time, printing one JSON report. It exits 1 when an expected occurrence
// did not launch or was skipped as missed.
func runBench(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("sundial bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts loadtest.Options
	fs.IntVar(&opts.Jobs, "jobs", 1000, "how many jobs, each on "+loadtest.Schedule)
	fs.IntVar(&opts.Minutes, "minutes", 3, "measured minutes, after a warm-up minute")
	fs.StringVar(&opts.DB, "db", "", "database file (default: a temporary one, removed afterwards)")
	syncMode := fs.String("sync", "full", "SQLite synchronous setting: full (the production setting) or normal")
	fs.DurationVar(&opts.Warmup, "warmup", time.Minute, "unmeasured run before the measured minutes")
	fs.IntVar(&opts.Workers, "workers", 0, "dispatcher workers (default: the dispatcher's)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile taken at the end of the measured minutes to this file")
	verbose := fs.Bool("v", false, "log the engine's and dispatcher's warnings to stderr")
	serve := fs.Bool("serve", false, "measure the whole of sundial serve: url_fetch jobs from config files calling a receiver in this process")
	soak := fs.Duration("soak", 0, "instead, run --jobs every-second jobs for this long with a short retention, printing the database's size and the memory as CSV every --soak-sample")
	soakSample := fs.Duration("soak-sample", 10*time.Second, "how often the soak samples")
	soakRetention := engine.Retention{Age: 2 * time.Minute, Count: 60, FailureAge: 5 * time.Minute, FailureCount: 60}
	fs.DurationVar(&soakRetention.Age, "soak-retention-age", soakRetention.Age, "the soak jobs' retention age (failures: this and --soak-retention-count too)")
	fs.IntVar(&soakRetention.Count, "soak-retention-count", soakRetention.Count, "the soak jobs' retention count")
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial bench: %v\n", err)
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sundial bench: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	switch *syncMode {
	case "full":
		opts.Sync = sqlite.SyncFull
	case "normal":
		opts.Sync = sqlite.SyncNormal
	default:
		fmt.Fprintf(stderr, "sundial bench: --sync %q: want full or normal\n", *syncMode)
		return exitUsage
	}
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	opts.Now = now
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "sundial bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "sundial bench: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			fmt.Fprintf(stderr, "sundial bench: %v\n", err)
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
			fmt.Fprintf(stderr, "sundial bench: %v\n", err)
			return 1
		}
		return 0
	}
	cpu := startCPUSampler(now)
	began := now()
	rep, err := loadtest.Run(context.Background(), opts)
	cpu.stop()
	if errors.Is(err, loadtest.ErrBadOptions) {
		fmt.Fprintf(stderr, "sundial bench: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "sundial bench: %v\n", err)
		return 1
	}
	return printBenchReport(withCPU(rep, cpu, began, opts.Warmup), stdout, stderr)
}

// benchReport is loadtest's report with the CPU the process used, so that
// `sundial bench` and the River harness (bench/river) report the same figures.
type benchReport struct {
	loadtest.Report
	// CPUSeconds is user+system CPU over the measured minutes;
	// CPUPer1000Launches the same per 1,000 measured launches; CPURunSeconds
	// the CPU of the whole run, defining the jobs and the warm-up included.
	CPUSeconds         float64 `json:"cpu_s"`
	CPUPer1000Launches float64 `json:"cpu_s_per_1000_launches"`
	CPURunSeconds      float64 `json:"cpu_run_s"`
}

// withCPU reads the measured minutes' CPU off the samples. loadtest does not
// say when its window began, so it is placed as loadtest places it: at the
// first second boundary after the jobs are defined and the warm-up ran
// (warmup 0 is loadtest's default of a minute). The store's opening, before
// the definitions, shifts it by milliseconds.
func withCPU(rep loadtest.Report, cpu *cpuSampler, began time.Time, warmup time.Duration) benchReport {
	if warmup <= 0 {
		warmup = time.Minute
	}
	start := began.Add(time.Duration(rep.DefineSeconds * float64(time.Second))).Add(warmup).Truncate(time.Second).Add(time.Second)
	end := start.Add(time.Duration(rep.Minutes) * time.Minute)
	out := benchReport{Report: rep, CPUSeconds: cpu.at(end) - cpu.at(start), CPURunSeconds: cpu.last()}
	if rep.Launches > 0 {
		out.CPUPer1000Launches = out.CPUSeconds / float64(rep.Launches) * 1000
	}
	return out
}

// cpuSampler reads the process's CPU time from /proc/self/stat every
// quarter second, keeping when it read it.
type cpuSampler struct {
	now     func() time.Time
	quit    chan struct{}
	done    chan struct{}
	samples []cpuSample // written by the sampling goroutine until done
}

type cpuSample struct {
	at  time.Time
	cpu float64 // seconds
}

func startCPUSampler(now func() time.Time) *cpuSampler {
	c := &cpuSampler{now: now, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			c.samples = append(c.samples, cpuSample{c.now(), procSelfCPU()})
			select {
			case <-t.C:
			case <-c.quit:
				c.samples = append(c.samples, cpuSample{c.now(), procSelfCPU()})
				return
			}
		}
	}()
	return c
}

func (c *cpuSampler) stop() {
	close(c.quit)
	<-c.done
}

// at interpolates the CPU used by time t between the samples around it;
// call it after stop.
func (c *cpuSampler) at(t time.Time) float64 {
	for i := 1; i < len(c.samples); i++ {
		a, b := c.samples[i-1], c.samples[i]
		if b.at.Before(t) {
			continue
		}
		if span := b.at.Sub(a.at); span > 0 && t.After(a.at) {
			return a.cpu + (b.cpu-a.cpu)*float64(t.Sub(a.at))/float64(span)
		}
		return a.cpu
	}
	return c.last()
}

// last is the CPU used by the last sample; call it after stop.
func (c *cpuSampler) last() float64 {
	if len(c.samples) == 0 {
		return 0
	}
	return c.samples[len(c.samples)-1].cpu
}

// procSelfCPU is the process's user+system CPU in seconds from
// /proc/self/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux);
// 0 where there is no such file.
func procSelfCPU() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis do not.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return float64(utime+stime) / 100
}

// printBenchReport prints a report as JSON and exits 1 if it is not OK.
func printBenchReport(rep interface{ OK() bool }, stdout, stderr io.Writer) int {
	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "sundial bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	if !rep.OK() {
		fmt.Fprintln(stderr, "sundial bench: occurrences were missed or repeated; see the report")
		return 1
	}
	return 0
}
