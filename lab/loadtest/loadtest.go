// Package loadtest measures the engine in real time: N noop jobs on
// every-minute schedules, run by the real engine, store (SQLite, or
// PostgreSQL: a private server it starts, or one it is given), local task
// dispatcher and watchdog for a number of minutes, and what it made of
// them — launches per second, launch lateness, skipped occurrences, store
// commits per invocation, CPU and memory, PostgreSQL's own included.
// `sundial-lab bench` prints its Report.
//
// The clock is injected (Options.Now), as everywhere below cmd/; waits are
// timers, which need no wall-clock reading here.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/internal/idlegc"
	"github.com/sundial-cron/sundial/lab/loadtest/measure"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// Schedule is every job's schedule: every minute at a second hashed from
// the job id, so that the jobs spread over the minute. With "* * * * *"
// every job would be due in the same second, and no engine launches
// 100,000 of them within one.
const Schedule = "H * * * * *"

// Options say what to measure.
type Options struct {
	Jobs    int
	Minutes int // measured minutes, after the warm-up
	// Warmup runs before the measurement, so that every job has settled
	// into its minute (the first ticks come due while jobs are still being
	// defined). Default one minute.
	Warmup time.Duration
	// DB is the database file; "" makes one in a temporary directory and
	// removes it afterwards. An existing file is used as it is.
	DB   string
	Sync sqlite.Sync
	// Postgres runs the PostgreSQL shape's store instead, on DatabaseURL,
	// or with DatabaseURL "" on a private server it starts (initdb into
	// a temporary directory, durable as in production) and stops, whose
	// CPU and memory it measures too.
	Postgres    bool
	DatabaseURL string
	// MaxConns bounds each instance's connections to PostgreSQL; default
	// the store's (postgres.DefaultMaxConns).
	MaxConns int32
	// Instances runs this many engines, each with its own connection pool
	// and dispatcher, over the one PostgreSQL database, as as many
	// instances of the PostgreSQL shape would; default 1. The jobs are
	// defined through the first.
	Instances int
	// Workers are the dispatcher's; default local.DefaultWorkers.
	Workers int
	// Ahead is how long before their time the dispatcher claims tasks,
	// and the engine commits launches; 0 claims at their time.
	Ahead time.Duration
	// Projects spreads the jobs over this many projects. Default 100.
	Projects int
	// Now is the clock. Required.
	Now func() time.Time
	// Logger gets the engine's and dispatcher's warnings; nil discards.
	Logger *slog.Logger
	// HeapProfile, if set, gets a heap profile taken at the end of the
	// measured minutes, with every job in its steady state.
	HeapProfile io.Writer
}

// ErrBadOptions wraps the errors of options Run cannot measure.
var ErrBadOptions = errors.New("bad options")

// Report is what a run measured. Times are in seconds.
type Report struct {
	Jobs      int    `json:"jobs"`
	Minutes   int    `json:"minutes"`
	Backend   string `json:"backend"` // embedded or postgres
	Instances int    `json:"instances,omitempty"`
	Sync      string `json:"sync,omitempty"`
	Workers   int    `json:"workers"`

	DefineSeconds float64 `json:"define_s"`
	// DefineCommits are the store's physical commits while the jobs were
	// defined, the first occurrences' launches among them.
	DefineCommits uint64 `json:"define_commits"`
	// Expected is Jobs × Minutes: each job has exactly one occurrence in
	// each measured minute.
	Expected int `json:"expected"`
	// Launches are the measured occurrences (scheduled inside the measured
	// minutes) that were launched; Missing the expected ones that were not
	// launched by the end of the run.
	Launches int `json:"launches"`
	Missing  int `json:"missing"`
	// LaunchesPerSecond is Launches over the measured minutes.
	LaunchesPerSecond float64 `json:"launches_per_s"`
	// Lateness of the measured launches: launch time minus scheduled time.
	measure.Lateness
	// Skipped occurrences by reason over the whole run; "missed" must not
	// appear.
	Skipped map[string]int `json:"skipped"`
	// Failed invocations (ended other than SUCCEEDED) over the whole run.
	Failed          int `json:"failed"`
	WatchdogRepairs int `json:"watchdog_repairs"`

	// Store transactions (Updates) and physical commits in the measured
	// minutes, per measured launch.
	StoreUpdates         uint64  `json:"store_updates"`
	StoreCommits         uint64  `json:"store_commits"`
	UpdatesPerInvocation float64 `json:"updates_per_invocation"`
	CommitsPerInvocation float64 `json:"commits_per_invocation"`

	// CPUSeconds is the process's user+system CPU over the measured
	// minutes, PostgresCPUSeconds its private PostgreSQL server's,
	// CPUPer1000Launches both per 1,000 measured launches, CPURunSeconds
	// and PostgresCPURunSeconds those of the whole run (definitions and
	// warm-up too): the figures the River harness (lab/river) reports for
	// its side.
	CPUSeconds            float64 `json:"cpu_s"`
	PostgresCPUSeconds    float64 `json:"postgres_cpu_s,omitempty"`
	CPUPer1000Launches    float64 `json:"cpu_s_per_1000_launches"`
	CPURunSeconds         float64 `json:"cpu_run_s"`
	PostgresCPURunSeconds float64 `json:"postgres_cpu_run_s,omitempty"`

	// PeakRSSMiB is the process's VmHWM; PeakHeapMiB the largest Go heap
	// in use seen by a sample every few seconds.
	PeakRSSMiB  float64 `json:"peak_rss_mib"`
	PeakHeapMiB float64 `json:"peak_heap_mib"`
	// PostgresPeakPSSMiB and PostgresPeakRSSMiB are the largest sums, over
	// the private server's processes, of their proportional and resident
	// sets, sampled as the heap is (lab/river's figures).
	PostgresPeakPSSMiB float64 `json:"postgres_peak_pss_mib,omitempty"`
	PostgresPeakRSSMiB float64 `json:"postgres_peak_rss_mib,omitempty"`
	WallSeconds        float64 `json:"wall_time_s"`
}

// OK reports whether every expected occurrence launched and none was
// skipped as missed.
func (r Report) OK() bool {
	return r.Missing == 0 && r.Skipped[string(statemachine.SkipMissed)] == 0
}

// drainGrace is how long the run waits after the measured minutes for the
// last measured occurrences to launch.
const drainGrace = 30 * time.Second

// Run measures and reports.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Now == nil {
		return Report{}, fmt.Errorf("%w: Now is required", ErrBadOptions)
	}
	if opts.Jobs <= 0 || opts.Minutes <= 0 {
		return Report{}, fmt.Errorf("%w: jobs and minutes must be positive", ErrBadOptions)
	}
	if opts.Warmup <= 0 {
		opts.Warmup = time.Minute
	}
	if opts.Workers <= 0 {
		// Set here so that the report says it.
		opts.Workers = local.DefaultWorkers
	}
	if opts.Projects <= 0 {
		opts.Projects = 100
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Instances <= 0 {
		opts.Instances = 1
	}
	if opts.Instances > 1 && !opts.Postgres {
		return Report{}, fmt.Errorf("%w: more than one instance needs the PostgreSQL store", ErrBadOptions)
	}
	began, cpuBegan := opts.Now(), processCPU()
	st, err := openStore(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	defer st.close()

	obs := newObserver(opts.Now)
	gcCtx, stopGC := context.WithCancel(ctx)
	defer stopGC()
	idle := idlegc.Start(gcCtx, opts.Now).Idle
	// instance is one engine and its dispatcher over rows.
	instance := func(rows rowStore) (*engine.Engine, *local.Dispatcher) {
		var eng *engine.Engine
		disp := local.New(rows, func(ctx context.Context, t task.Task) error { return eng.HandleTask(ctx, t) }, local.Options{
			Prepare: func(ctx context.Context, t task.Task) (task.Handler, bool) { return eng.PrepareTask(ctx, t) },
			Workers: opts.Workers, Ahead: local.AheadOf(opts.Ahead), Now: opts.Now, Logger: opts.Logger, Idle: idle,
		})
		eng = engine.New(rows, disp, map[string]targets.Target{"noop": noop.Target{}}, engine.Options{
			Now: opts.Now, Observer: obs, Logger: opts.Logger,
		})
		return eng, disp
	}
	eng, disp := instance(st)
	dispatchers := []*local.Dispatcher{disp}
	for range opts.Instances - 1 {
		other, err := st.another(ctx)
		if err != nil {
			return Report{}, err
		}
		_, d := instance(other)
		dispatchers = append(dispatchers, d)
	}
	tick := time.NewTicker(time.Minute)
	wd := watchdog.New(st, eng, watchdog.Options{Now: opts.Now, Logger: opts.Logger, Ticks: tick.C})

	rep := Report{Jobs: opts.Jobs, Minutes: opts.Minutes, Backend: "embedded", Instances: opts.Instances, Sync: syncName(opts.Sync), Workers: opts.Workers}
	if opts.Postgres {
		rep.Backend, rep.Sync = "postgres", ""
	}
	mem := startMemSampler(st.pgPID)
	defer mem.stop()

	// The dispatcher runs while the jobs are defined: their first ticks
	// come due meanwhile.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	var bg sync.WaitGroup
	for _, d := range dispatchers {
		bg.Go(func() {
			if err := d.Run(runCtx); err != nil {
				opts.Logger.Error("dispatcher", "err", err)
			}
		})
	}
	bg.Go(func() { wd.Run(runCtx) })
	defer func() {
		stopRun()
		tick.Stop()
		bg.Wait()
	}()

	t0, defining := opts.Now(), st.stats()
	if err := define(ctx, eng, opts); err != nil {
		return rep, err
	}
	rep.DefineSeconds = opts.Now().Sub(t0).Seconds()
	rep.DefineCommits = st.stats().Commits - defining.Commits

	// Measure whole minutes from the first second boundary after the
	// warm-up, so each job has exactly one occurrence per minute in it.
	// The warm-up starts when the last job is defined: only then does the
	// engine carry the whole load.
	start := opts.Now().Add(opts.Warmup).Truncate(time.Second).Add(time.Second)
	end := start.Add(time.Duration(opts.Minutes) * time.Minute)
	obs.window(start, end)
	if err := measure.SleepUntil(ctx, opts.Now, start); err != nil {
		return rep, err
	}
	before, cpuBefore, pgBefore := st.stats(), processCPU(), st.pgCPU()
	if err := measure.SleepUntil(ctx, opts.Now, end); err != nil {
		return rep, err
	}
	after, cpuAfter, pgAfter := st.stats(), processCPU(), st.pgCPU()
	if opts.HeapProfile != nil {
		runtime.GC()
		if err := pprof.Lookup("heap").WriteTo(opts.HeapProfile, 0); err != nil {
			return rep, err
		}
	}
	rep.Expected = opts.Jobs * opts.Minutes
	// Let the last occurrences of the window launch, without waiting
	// longer than needed.
	for deadline := end.Add(drainGrace); obs.measured() < rep.Expected && opts.Now().Before(deadline); {
		if err := measure.SleepUntil(ctx, opts.Now, opts.Now().Add(100*time.Millisecond)); err != nil {
			return rep, err
		}
	}
	stopRun()
	tick.Stop()
	bg.Wait()

	late, skipped, failed, repairs := obs.results()
	rep.Launches = len(late)
	rep.Missing = max(0, rep.Expected-rep.Launches)
	rep.LaunchesPerSecond = float64(rep.Launches) / end.Sub(start).Seconds()
	rep.Lateness = measure.LatenessOf(late)
	rep.Skipped, rep.Failed, rep.WatchdogRepairs = skipped, failed, repairs
	rep.StoreUpdates = after.Updates - before.Updates
	rep.StoreCommits = after.Commits - before.Commits
	if rep.Launches > 0 {
		rep.UpdatesPerInvocation = float64(rep.StoreUpdates) / float64(rep.Launches)
		rep.CommitsPerInvocation = float64(rep.StoreCommits) / float64(rep.Launches)
		rep.CPUPer1000Launches = (cpuAfter - cpuBefore + pgAfter - pgBefore) / float64(rep.Launches) * 1000
	}
	rep.CPUSeconds, rep.CPURunSeconds = cpuAfter-cpuBefore, processCPU()-cpuBegan
	rep.PostgresCPUSeconds, rep.PostgresCPURunSeconds = pgAfter-pgBefore, st.pgCPU()
	p := mem.peaks()
	rep.PeakRSSMiB, rep.PeakHeapMiB = mib(p.rss), mib(p.heap)
	rep.PostgresPeakPSSMiB, rep.PostgresPeakRSSMiB = mib(p.pgPSS), mib(p.pgRSS)
	rep.WallSeconds = opts.Now().Sub(began).Seconds()
	return rep, nil
}

// define applies each project's jobs as one revision of its config, all
// projects at once, as sundial serve's config refresher does at its first
// start or on an import.
func define(ctx context.Context, eng *engine.Engine, opts Options) error {
	def := engine.Definition{Schedule: Schedule, Target: "noop"}
	revs := make([]engine.Revision, opts.Projects)
	for i := range opts.Jobs {
		p := i % opts.Projects
		revs[p].Jobs = append(revs[p].Jobs, engine.Job{ID: JobID(i, opts.Projects), Definition: def})
	}
	errs := make([]error, opts.Projects)
	var wg sync.WaitGroup
	for p := range revs {
		if len(revs[p].Jobs) == 0 {
			continue
		}
		revs[p].ID = "bench"
		wg.Go(func() { errs[p] = eng.ApplyProject(ctx, engine.ProjectOf(revs[p].Jobs[0].ID), revs[p]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// JobID is the id of the i-th job of a run over projects projects.
func JobID(i, projects int) string {
	return fmt.Sprintf("bench%03d/job%07d", i%projects, i)
}

func syncName(s sqlite.Sync) string {
	switch s {
	case sqlite.SyncFull:
		return "full"
	case sqlite.SyncNormal:
		return "normal"
	}
	return fmt.Sprint(int(s))
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// memSampler keeps the largest Go heap seen, and of a private PostgreSQL
// server (pgPID, 0: none) the largest sums of its processes' PSS and RSS;
// the kernel keeps the peak RSS.
type memSampler struct {
	sampler            *measure.Sampler
	pgPID              int
	heap, pgPSS, pgRSS atomic.Uint64
}

func startMemSampler(pgPID int) *memSampler {
	m := &memSampler{pgPID: pgPID}
	m.sampler = measure.StartSampler(2*time.Second, m.sample)
	return m
}

func (m *memSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var rss, pss uint64
	if m.pgPID != 0 {
		rss, pss = measure.TreeMemory(m.pgPID)
	}
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

// peaks are the peaks seen, in bytes; rss is the process's (0 where /proc
// cannot tell).
type peaks struct{ rss, heap, pgPSS, pgRSS uint64 }

func (m *memSampler) peaks() peaks {
	m.stop()
	m.sample()
	return peaks{peakRSS(), m.heap.Load(), m.pgPSS.Load(), m.pgRSS.Load()}
}
