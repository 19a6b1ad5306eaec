package server

import (
	"context"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/internal/idlegc"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/web/signin"
)

// checkEmbedded checks the embedded shape's settings: it needs nothing
// beyond what every shape does.
func checkEmbedded(*Settings) error { return nil }

// embeddedConfig is the engine's configuration in the embedded shape. A
// StartInvocation comes again here only when the process that held it is
// dead (its lock file says so at once) or stopped working for a while (the
// count in its lock file stood still): a step of the wall clock, which
// makes leases and heartbeats look old, does not free a working process's
// task (task/local's liveness.go). No live process can still be on its way
// to the target, so the grace before asking the target is kept short and
// a killed server's in-flight launch is settled within seconds.
func embeddedConfig(s *Settings) statemachine.Config {
	c := statemachine.DefaultConfig
	c.LaunchGrace = time.Second
	c.TaskGrace = s.TaskGrace
	c.MinPoll, c.MaxPoll = s.PollMin, s.PollMax
	return c
}

// openEmbedded opens the embedded shape: one process over one SQLite
// file, whose task rows an in-process dispatcher delivers, with the
// passes ticking in-process and a local caller the administrator when no
// sign-in is configured.
func openEmbedded(ctx context.Context, s *Settings, env environment) (*backends, error) {
	cfg := embeddedConfig(s)
	// Open first: it refuses a file it must not write to (damaged, or of
	// a newer release), and Restored would write to it.
	st, err := sqlite.Open(s.DB, sqlite.Options{Synchronous: s.Sync})
	if err != nil {
		return nil, err
	}
	if cfg.RestoredAt, err = sqlite.Restored(ctx, s.DB, env.now()); err != nil {
		st.Close()
		return nil, err
	}
	if !cfg.RestoredAt.IsZero() {
		env.logger.Warn("the database is a restored backup: occurrences scheduled before the first start on it are recorded as missed, and invocations of them that are queued end ABORTED, since they may have run after the backup was taken (docs/operations.md)",
			"first_start", cfg.RestoredAt)
	}
	disp := local.New(st, env.handle, local.Options{
		Prepare:   env.prepare,
		Workers:   s.Workers,
		Ahead:     local.AheadOf(s.Ahead),
		Idle:      idlegc.Start(ctx, env.now).Idle,
		Now:       env.now,
		Logger:    env.logger,
		LockDir:   s.DB + ".owners",
		StopGrace: s.StopGrace,
	})
	watchdogTicks, retentionTicks := time.NewTicker(time.Minute), time.NewTicker(time.Minute)
	return &backends{
		store:   st,
		queue:   disp,
		config:  cfg,
		backlog: st,
		ticks: ticks{
			watchdog:  watchdogTicks.C,
			retention: retentionTicks.C,
			refresh:   refreshTicks(ctx, s.Configs.Refresh, env.now, nil),
		},
		services:      []service{disp},
		localMode:     true,
		oneProcess:    true,
		commands:      true,
		revocations:   func() (signin.Revocations, error) { return signin.NewMemory(env.now), nil },
		logAttrs:      []any{"db", s.DB, "command_projects", strings.Join(s.Commands.Projects, ","), "command_user", s.Commands.User},
		shutdownGrace: 5 * time.Second,
		close: func() {
			watchdogTicks.Stop()
			retentionTicks.Stop()
			st.Close()
		},
	}, nil
}
