// Command river-bench measures River's periodic jobs the way `sundial
// bench` measures Sundial: N noop jobs, each every minute at its own second
// (the same seconds as Sundial's jobs of the same ids), on a private
// PostgreSQL with durable commits, a warm-up minute and M measured minutes.
// It prints the same JSON report as `sundial-lab bench`, with PostgreSQL's CPU
// and memory beside the harness's own.
//
// `river-bench table LABEL=FILE...` turns reports of either kind into one
// markdown table (lab/compare uses it).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/lab/loadtest/measure"
	"github.com/sundial-cron/sundial/schedule"
)

const exitUsage = 2

func main() {
	if len(os.Args) > 1 && os.Args[1] == "table" {
		os.Exit(runTable(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(runBench(os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

// Options say what to measure.
type Options struct {
	Jobs    int
	Minutes int
	Warmup  time.Duration
	// Workers is the default queue's MaxWorkers.
	Workers int
	// Projects spreads the job ids as `sundial-lab bench` does, so that the
	// hashed seconds are the same.
	Projects int
	Now      func() time.Time
	Logger   *slog.Logger
}

// Report is what a run measured, under the keys of `sundial-lab bench`'s
// report where the figure is the same one. Times are in seconds, sizes in
// MiB.
type Report struct {
	Engine          string `json:"engine"`
	RiverVersion    string `json:"river_version"`
	PostgresVersion string `json:"postgres_version"`
	Jobs            int    `json:"jobs"`
	Minutes         int    `json:"minutes"`
	Sync            string `json:"sync"`
	Workers         int    `json:"workers"`

	// DefineSeconds is the time to add the periodic jobs to the running
	// client (River keeps them in memory only).
	DefineSeconds float64 `json:"define_s"`
	Expected      int     `json:"expected"`
	Launches      int     `json:"launches"`
	Missing       int     `json:"missing"`
	// Repeated counts measured occurrences worked more than once.
	Repeated          int     `json:"repeated"`
	LaunchesPerSecond float64 `json:"launches_per_s"`
	measure.Lateness
	Failed int `json:"failed"`

	// PeakRSSMiB is the harness's VmHWM, PeakHeapMiB its largest sampled
	// Go heap.
	PeakRSSMiB  float64 `json:"peak_rss_mib"`
	PeakHeapMiB float64 `json:"peak_heap_mib"`
	// PostgresPeakRSSMiB and PostgresPeakPSSMiB are the largest sums,
	// sampled every two seconds, of the PostgreSQL processes' VmRSS and Pss.
	PostgresPeakRSSMiB float64 `json:"postgres_peak_rss_mib"`
	PostgresPeakPSSMiB float64 `json:"postgres_peak_pss_mib"`
	WallSeconds        float64 `json:"wall_time_s"`

	// CPUSeconds is the harness's CPU over the measured minutes,
	// PostgresCPUSeconds PostgreSQL's; CPUPer1000Launches is both
	// together per 1,000 measured launches. The _run_ figures are the
	// whole run's.
	CPUSeconds            float64 `json:"cpu_s"`
	PostgresCPUSeconds    float64 `json:"postgres_cpu_s"`
	CPUPer1000Launches    float64 `json:"cpu_s_per_1000_launches"`
	CPURunSeconds         float64 `json:"cpu_run_s"`
	PostgresCPURunSeconds float64 `json:"postgres_cpu_run_s"`
}

// OK reports whether every expected occurrence was worked exactly once.
func (r Report) OK() bool { return r.Missing == 0 && r.Repeated == 0 && r.Failed == 0 }

// riverVersion is the River the module requires (go.mod pins it).
const riverVersion = "v0.51.1"

// jobSchedule is `sundial-lab bench`'s schedule (lab/loadtest.Schedule):
// every minute at a second hashed from the job id.
const jobSchedule = "H * * * * *"

// drainGrace is how long the run waits after the measured minutes for the
// last measured occurrences to be worked, as `sundial-lab bench` does.
const drainGrace = 30 * time.Second

func runBench(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("river-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := Options{Now: now}
	fs.IntVar(&opts.Jobs, "jobs", 1000, "how many periodic jobs, each every minute at its own second")
	fs.IntVar(&opts.Minutes, "minutes", 3, "measured minutes, after the warm-up")
	fs.DurationVar(&opts.Warmup, "warmup", time.Minute, "unmeasured run before the measured minutes")
	// River's own benchmark (cmd/river bench) runs its default queue with
	// 2,000 workers, FetchCooldown 2 ms and FetchPollInterval 20 ms.
	fs.IntVar(&opts.Workers, "workers", 2000, "the queue's MaxWorkers")
	fs.IntVar(&opts.Projects, "projects", 100, "projects the job ids spread over (as sundial-lab bench's)")
	verbose := fs.Bool("v", false, "log River's warnings to stderr")
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "river-bench: %v\n", err)
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "river-bench: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if opts.Jobs <= 0 || opts.Minutes <= 0 || opts.Workers <= 0 || opts.Projects <= 0 || opts.Warmup <= 0 {
		fmt.Fprintln(stderr, "river-bench: jobs, minutes, workers, projects and warmup must be positive")
		return exitUsage
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	// Ctrl-C or SIGTERM ends the run early; the deferred stops still
	// shut PostgreSQL down and remove its directory.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "river-bench: %v\n", err)
		return 1
	}
	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "river-bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	if !rep.OK() {
		fmt.Fprintln(stderr, "river-bench: occurrences were missed, repeated or failed; see the report")
		return 1
	}
	return 0
}

// run measures and reports.
func run(ctx context.Context, opts Options) (rep Report, err error) {
	began := opts.Now()
	// The same private server as sundial-lab bench --backend postgres
	// starts: durable, as in production.
	pg, err := pgtest.Start(true)
	if err != nil {
		return rep, err
	}
	defer func() {
		if stopErr := pg.Close(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	pool, err := pgxpool.New(ctx, pg.URL)
	if err != nil {
		return rep, err
	}
	defer pool.Close()
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return rep, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return rep, fmt.Errorf("migrating River's schema: %w", err)
	}

	rec := newRecorder(opts.Now, opts.Jobs)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(_ context.Context, job *river.Job[benchArgs]) error {
		rec.worked(job.Args.Job, job.ScheduledAt)
		return nil
	}))
	client, err := river.NewClient(driver, &river.Config{
		FetchCooldown:     2 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.Workers}},
		Workers:           workers,
		Logger:            opts.Logger,
	})
	if err != nil {
		return rep, err
	}
	if err := client.Start(ctx); err != nil {
		return rep, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if stopErr := client.Stop(stopCtx); stopErr != nil && err == nil {
			err = stopErr
		}
	}()

	rep = Report{
		Engine: "river", RiverVersion: riverVersion, PostgresVersion: postgresVersion(ctx, pool),
		Jobs: opts.Jobs, Minutes: opts.Minutes, Sync: "fsync=on synchronous_commit=on", Workers: opts.Workers,
	}
	mem := startMemSampler(pg.PID())
	defer mem.stop()

	t0 := opts.Now()
	jobs, err := periodicJobs(opts.Jobs, opts.Projects)
	if err != nil {
		return rep, err
	}
	if _, err := client.PeriodicJobs().AddManySafely(jobs); err != nil {
		return rep, err
	}
	rep.DefineSeconds = opts.Now().Sub(t0).Seconds()

	// The same window as sundial-lab bench's: whole minutes from the first
	// second boundary after the warm-up, which starts once every job is
	// defined, so each job has exactly one occurrence a minute in it.
	start := opts.Now().Add(opts.Warmup).Truncate(time.Second).Add(time.Second)
	end := start.Add(time.Duration(opts.Minutes) * time.Minute)
	rec.window(start, end)
	if err := measure.SleepUntil(ctx, opts.Now, start); err != nil {
		return rep, err
	}
	cpu0, pgCPU0 := selfCPU(), measure.TreeCPU(pg.PID())
	if err := measure.SleepUntil(ctx, opts.Now, end); err != nil {
		return rep, err
	}
	cpu1, pgCPU1 := selfCPU(), measure.TreeCPU(pg.PID())
	rep.Expected = opts.Jobs * opts.Minutes
	for deadline := end.Add(drainGrace); rec.measured() < rep.Expected && opts.Now().Before(deadline); {
		if err := measure.SleepUntil(ctx, opts.Now, opts.Now().Add(100*time.Millisecond)); err != nil {
			return rep, err
		}
	}

	late, repeated := rec.results()
	rep.Launches = len(late)
	rep.Missing = max(0, rep.Expected-rep.Launches)
	rep.Repeated = repeated
	rep.LaunchesPerSecond = float64(rep.Launches) / end.Sub(start).Seconds()
	rep.Lateness = measure.LatenessOf(late)
	// /proc counts CPU in hundredths of a second: round off the float
	// subtraction's noise.
	rep.CPUSeconds, rep.PostgresCPUSeconds = ticks(cpu1-cpu0), ticks(pgCPU1-pgCPU0)
	if rep.Launches > 0 {
		rep.CPUPer1000Launches = (rep.CPUSeconds + rep.PostgresCPUSeconds) / float64(rep.Launches) * 1000
	}
	rep.CPURunSeconds, rep.PostgresCPURunSeconds = ticks(selfCPU()), ticks(measure.TreeCPU(pg.PID()))
	peaks := mem.peaks()
	rep.PeakRSSMiB = mib(measure.ProcField(0, "status", "VmHWM:"))
	rep.PeakHeapMiB = mib(peaks.heap)
	rep.PostgresPeakRSSMiB, rep.PostgresPeakPSSMiB = mib(peaks.pgRSS), mib(peaks.pgPSS)
	rep.WallSeconds = opts.Now().Sub(began).Seconds()
	return rep, nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// ticks rounds CPU seconds to /proc's hundredths.
func ticks(s float64) float64 { return math.Round(s*measure.ClockTick) / measure.ClockTick }

// selfCPU is the harness's CPU seconds so far.
func selfCPU() float64 {
	st, _ := measure.ReadStat(0)
	return st.CPU
}

// benchArgs are a periodic job's arguments: which job it is, so that a
// repeat can be told.
type benchArgs struct {
	Job int `json:"job"`
}

func (benchArgs) Kind() string { return "bench" }

// jobID is the id of the i-th job, as lab/loadtest.JobID makes it: the
// id seeds the hashed second, so the same ids fire at the same seconds as
// under `sundial-lab bench`.
func jobID(i, projects int) string {
	return fmt.Sprintf("bench%03d/job%07d", i%projects, i)
}

// periodicJobs makes the n periodic jobs, each on Sundial's own schedule
// for its id.
func periodicJobs(n, projects int) ([]*river.PeriodicJob, error) {
	jobs := make([]*river.PeriodicJob, n)
	for i := range n {
		s, err := parseJobSchedule(i, projects)
		if err != nil {
			return nil, err
		}
		jobs[i] = river.NewPeriodicJob(s, func() (river.JobArgs, *river.InsertOpts) {
			return benchArgs{Job: i}, nil
		}, nil)
	}
	return jobs, nil
}

// parseJobSchedule is the i-th job's schedule, parsed by Sundial's own
// parser so that its hashed second is the one Sundial gives the job.
func parseJobSchedule(i, projects int) (sundialSchedule, error) {
	s, err := schedule.Parse(jobSchedule, schedule.Options{JobID: jobID(i, projects)})
	return sundialSchedule{s}, err
}

// sundialSchedule is a Sundial schedule as River's PeriodicSchedule.
type sundialSchedule struct{ s *schedule.Schedule }

// Next is the schedule's next time after t; an every-minute schedule
// always has one.
func (s sundialSchedule) Next(t time.Time) time.Time {
	next, _ := s.s.Next(t)
	return next
}

// recorder keeps the lateness of the work on occurrences scheduled inside
// the measured window, and counts repeats.
type recorder struct {
	now func() time.Time

	mu         sync.Mutex
	start, end time.Time
	late       []time.Duration
	last       []time.Time // each job's latest worked occurrence
	repeated   int
}

func newRecorder(now func() time.Time, jobs int) *recorder {
	return &recorder{now: now, last: make([]time.Time, jobs)}
}

func (r *recorder) window(start, end time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start, r.end = start, end
}

// worked records that the work on job's occurrence at scheduled started
// now.
func (r *recorder) worked(job int, scheduled time.Time) {
	started := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if job < 0 || job >= len(r.last) {
		return
	}
	if r.last[job].Equal(scheduled) {
		r.repeated++
		return
	}
	r.last[job] = scheduled
	if r.start.IsZero() || scheduled.Before(r.start) || !scheduled.Before(r.end) {
		return
	}
	r.late = append(r.late, started.Sub(scheduled))
}

func (r *recorder) measured() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.late)
}

func (r *recorder) results() ([]time.Duration, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.late), r.repeated
}

// memSampler keeps, every two seconds (as sundial-lab bench's), the largest Go
// heap of the harness and the largest summed RSS and PSS of the PostgreSQL
// processes.
type memSampler struct {
	root    int
	sampler *measure.Sampler

	heap, pgRSS, pgPSS atomic.Uint64
}

type memPeaks struct{ heap, pgRSS, pgPSS uint64 }

func startMemSampler(root int) *memSampler {
	m := &memSampler{root: root}
	m.sampler = measure.StartSampler(2*time.Second, m.sample)
	return m
}

func (m *memSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, pss := measure.TreeMemory(m.root)
	for _, p := range []struct {
		peak *atomic.Uint64
		v    uint64
	}{{&m.heap, ms.HeapInuse}, {&m.pgRSS, rss}, {&m.pgPSS, pss}} {
		if p.v > p.peak.Load() {
			p.peak.Store(p.v)
		}
	}
}

func (m *memSampler) stop() { m.sampler.Stop() }

func (m *memSampler) peaks() memPeaks {
	m.stop()
	m.sample()
	return memPeaks{m.heap.Load(), m.pgRSS.Load(), m.pgPSS.Load()}
}
