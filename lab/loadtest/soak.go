package loadtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/internal/idlegc"
	"github.com/sundial-cron/sundial/lab/loadtest/measure"
	"github.com/sundial-cron/sundial/retention"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// SoakSchedule is every soak job's schedule: every second.
const SoakSchedule = "* * * * * *"

// SoakOptions say what a soak runs: every-second noop jobs with a short
// retention, for long enough to see whether the file and the memory level
// off.
type SoakOptions struct {
	Jobs     int
	Duration time.Duration
	// Retention is every job's; the pass runs every RetentionEvery
	// (default a minute, as serve runs it) over every job, without a
	// bound on what it deletes.
	Retention      engine.Retention
	RetentionEvery time.Duration
	// Sample is how often a Sample is written; default 10s.
	Sample  time.Duration
	DB      string // "" is a temporary file, removed afterwards
	Sync    sqlite.Sync
	Workers int
	Now     func() time.Time // required
	// Out receives the samples as CSV, one line each as it is taken.
	Out io.Writer
}

// SoakSample is one sample: the database's bytes on disk (the file and
// its WAL), the process's resident memory and Go heap, and the counts so
// far.
type SoakSample struct {
	Seconds    float64
	DBBytes    int64
	WALBytes   int64
	RSSBytes   uint64
	HeapBytes  uint64
	Launched   int64
	Skipped    int64
	Deleted    int64
	Passes     int64
	LastPassMs int64
}

// soakHeader names SoakSample's CSV columns.
const soakHeader = "seconds,db_bytes,wal_bytes,rss_bytes,heap_bytes,launched,skipped,deleted,passes,last_pass_ms"

// Soak runs the soak and returns its samples.
func Soak(ctx context.Context, opts SoakOptions) ([]SoakSample, error) {
	if opts.Now == nil || opts.Jobs <= 0 || opts.Duration <= 0 {
		return nil, fmt.Errorf("%w: Now, jobs and duration are required", ErrBadOptions)
	}
	if opts.RetentionEvery <= 0 {
		opts.RetentionEvery = time.Minute
	}
	if opts.Sample <= 0 {
		opts.Sample = 10 * time.Second
	}
	if opts.Workers <= 0 {
		opts.Workers = local.DefaultWorkers
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	path := opts.DB
	if path == "" {
		dir, err := os.MkdirTemp("", "sundial-soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "soak.db")
	}
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: opts.Sync})
	if err != nil {
		return nil, err
	}
	defer st.Close()

	obs := &soakObserver{}
	var eng *engine.Engine
	gcCtx, stopGC := context.WithCancel(ctx)
	defer stopGC()
	disp := local.New(st, func(ctx context.Context, t task.Task) error { return eng.HandleTask(ctx, t) }, local.Options{
		Prepare: func(ctx context.Context, t task.Task) (task.Handler, bool) { return eng.PrepareTask(ctx, t) },
		Workers: opts.Workers, Now: opts.Now, Idle: idlegc.Start(gcCtx, opts.Now).Idle,
	})
	eng = engine.New(st, disp, map[string]targets.Target{"noop": noop.Target{}}, engine.Options{Now: opts.Now, Observer: obs})
	wdTick := time.NewTicker(time.Minute)
	defer wdTick.Stop()
	wd := watchdog.New(st, eng, watchdog.Options{Now: opts.Now, Ticks: wdTick.C})
	ret := retention.New(st, eng, retention.Options{Now: opts.Now, MaxPerPass: 1 << 30, JobsPerPass: opts.Jobs})

	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var bg sync.WaitGroup
	defer func() {
		stop()
		bg.Wait()
	}()
	bg.Go(func() { _ = disp.Run(runCtx) })
	bg.Go(func() { _ = wd.Run(runCtx) })

	def := engine.Definition{Schedule: SoakSchedule, Target: "noop", Retention: opts.Retention}
	var next atomic.Int64
	var defineErr error
	var once sync.Once
	var defs sync.WaitGroup
	for range 64 {
		defs.Go(func() {
			for i := int(next.Add(1)) - 1; i < opts.Jobs; i = int(next.Add(1)) - 1 {
				if err := eng.Define(ctx, JobID(i, 100), def); err != nil {
					once.Do(func() { defineErr = err })
					return
				}
			}
		})
	}
	defs.Wait()
	if defineErr != nil {
		return nil, defineErr
	}

	var deleted, passes, lastPass atomic.Int64
	bg.Go(func() {
		t := time.NewTicker(opts.RetentionEvery)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
			began := opts.Now()
			res, _ := ret.Pass(runCtx)
			deleted.Add(int64(res.Deleted))
			passes.Add(1)
			lastPass.Store(opts.Now().Sub(began).Milliseconds())
		}
	})

	start := opts.Now()
	fmt.Fprintln(opts.Out, soakHeader)
	var samples []SoakSample
	for {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := SoakSample{
			Seconds: opts.Now().Sub(start).Seconds(), DBBytes: size(path), WALBytes: size(path + "-wal"),
			RSSBytes: measure.ProcField(0, "status", "VmRSS:"), HeapBytes: ms.HeapInuse,
			Launched: obs.launched.Load(), Skipped: obs.skipped.Load(),
			Deleted: deleted.Load(), Passes: passes.Load(), LastPassMs: lastPass.Load(),
		}
		samples = append(samples, s)
		fmt.Fprintf(opts.Out, "%.0f,%d,%d,%d,%d,%d,%d,%d,%d,%d\n", s.Seconds, s.DBBytes, s.WALBytes, s.RSSBytes, s.HeapBytes,
			s.Launched, s.Skipped, s.Deleted, s.Passes, s.LastPassMs)
		if s.Seconds >= opts.Duration.Seconds() {
			return samples, nil
		}
		if err := measure.SleepUntil(ctx, opts.Now, opts.Now().Add(opts.Sample)); err != nil {
			return samples, err
		}
	}
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// soakObserver counts launches and skipped occurrences.
type soakObserver struct{ launched, skipped atomic.Int64 }

func (o *soakObserver) Launched(string, time.Duration)                     { o.launched.Add(1) }
func (o *soakObserver) Ended(string, statemachine.Status)                  {}
func (o *soakObserver) Skipped(_ string, _ statemachine.SkipReason, n int) { o.skipped.Add(int64(n)) }
func (o *soakObserver) Repaired(string)                                    {}
func (o *soakObserver) Disabled(string, statemachine.Reason)               {}
func (o *soakObserver) TaskFailed(string, task.Kind, bool)                 {}
