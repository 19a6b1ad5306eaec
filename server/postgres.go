package server

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sundial-cron/sundial/internal/idlegc"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/postgres"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/web/signin"
)

// Postgres are the PostgreSQL shape's settings.
type Postgres struct {
	// URL is the database's connection string (--database-url, or
	// $SUNDIAL_DATABASE_URL, which keeps a password out of ps).
	URL string
	// ListenURL is where the instance LISTENs for the others' tasks: a
	// session of its own, which PgBouncer in transaction mode does not
	// keep; "": URL.
	ListenURL string
	// MaxConns bounds each instance's connections.
	MaxConns int
}

// checkPostgres refuses the PostgreSQL shape without its database.
func checkPostgres(s *Settings) error {
	if s.Postgres.URL == "" {
		return errors.New("--backend postgres needs --database-url or $SUNDIAL_DATABASE_URL")
	}
	if s.Postgres.MaxConns < 4 {
		return errors.New("--database-max-conns: want at least 4 (the dispatcher's claims, its handlers' transactions, the API's reads and the wake-ups' listener each take one)")
	}
	return nil
}

// postgresLease is how long a claimed task's handler may run on the
// instance that claimed it: task/local's default lease.
const postgresLease = 10 * time.Minute

// postgresConfig is the engine's configuration in the PostgreSQL shape. A
// StartInvocation comes again here when the instance that claimed it has
// been silent for OrphanAfter, which a killed instance is, and also one
// stopped (SIGSTOP, a paused VM) or cut off from the database but not from
// the targets: it may yet resume and call the target. Its handler's
// context ends with its lease, after which no call of it starts, so the
// grace before asking the target whether the launch happened is the
// lease, and a little more. A launch in flight on an instance that died
// is so settled within 11 minutes, and skipped rather than doubled until
// then (When in doubt, skip); the job's other occurrences go on meanwhile
// as its overlap policy says.
func postgresConfig(s *Settings) statemachine.Config {
	c := statemachine.DefaultConfig
	c.LaunchGrace = postgresLease + time.Minute
	c.TaskGrace = s.TaskGrace
	c.MinPoll, c.MaxPoll = s.PollMin, s.PollMax
	return c
}

// openPostgres opens the PostgreSQL shape: any number of instances over
// one database. Each runs task/local's dispatcher over the database's task
// rows, claiming with FOR UPDATE SKIP LOCKED; tells the others of the
// tasks it enqueues, over LISTEN/NOTIFY; and asks the database for the
// turn before each once-a-minute pass, so that the fleet runs each once a
// minute, not each instance.
func openPostgres(ctx context.Context, s *Settings, env environment) (*backends, error) {
	cfg := postgresConfig(s)
	st, err := postgres.Open(ctx, s.Postgres.URL, postgres.Options{MaxConns: int32(s.Postgres.MaxConns)})
	if err != nil {
		return nil, err
	}
	cfg.RestoredAt, err = st.Restored(ctx, env.now())
	switch {
	case errors.Is(err, postgres.ErrCannotTellRestore):
		env.logger.Warn(err.Error() + ": a database restored from a backup would run as if it were not, and occurrences after the backup may launch again (docs/postgres.md, Backups)")
	case err != nil:
		st.Close()
		return nil, err
	}
	if !cfg.RestoredAt.IsZero() {
		env.logger.Warn("the database is a restored backup or a promoted replica (its cluster or timeline changed): occurrences scheduled before the first start on it are recorded as missed, and invocations of them that are queued end ABORTED, since they may have run after the copy was taken (docs/postgres.md)",
			"first_start", cfg.RestoredAt)
	}
	fl, err := newFleet(st, s, env.now, env.logger)
	if err != nil {
		st.Close()
		return nil, err
	}
	disp := local.New(st, env.handle, local.Options{
		Owner:     fl.self.ID,
		Prepare:   env.prepare,
		Workers:   s.Workers,
		Lease:     postgresLease,
		Ahead:     local.AheadOf(s.Ahead),
		Idle:      idlegc.Start(ctx, env.now).Idle,
		Now:       env.now,
		Logger:    env.logger,
		StopGrace: s.StopGrace,
	})
	turn := func(name string, every time.Duration) func(time.Time) bool {
		return func(at time.Time) bool {
			ok, err := st.TakeTurn(ctx, name, at, every)
			if err != nil && ctx.Err() == nil {
				env.logger.Warn("asking the database whose turn the "+name+" pass is failed; skipped this time", "err", err)
			}
			return ok
		}
	}
	watchdogTicks, retentionTicks := time.NewTicker(time.Minute), time.NewTicker(time.Minute)
	listener := serviceFunc(func(ctx context.Context) error {
		url := s.Postgres.ListenURL
		if url == "" {
			url = s.Postgres.URL
		}
		return postgres.Listen(ctx, url, env.now, env.logger, disp.Wake)
	})
	return &backends{
		store:     st,
		queue:     announcingQueue{disp, st.NewAnnouncer(env.now), env.now, env.logger},
		config:    cfg,
		backlog:   st,
		metrics:   []prometheus.Collector{postgresCollector{st}, fleetCollector{fl}},
		instances: fl.list,
		ticks: ticks{
			watchdog:  turns(ctx, watchdogTicks.C, turn("watchdog", time.Minute)),
			retention: turns(ctx, retentionTicks.C, turn("retention", time.Minute)),
			refresh:   refreshTicks(ctx, s.Configs.Refresh, env.now, turn("refresh", s.Configs.Refresh)),
		},
		services:      []service{disp, listener, fl},
		localMode:     true,
		commands:      true,
		revocations:   func() (signin.Revocations, error) { return st.NewRevocations(env.now), nil },
		logAttrs:      []any{"database", databaseName(s.Postgres.URL), "command_projects", strings.Join(s.Commands.Projects, ","), "command_user", s.Commands.User},
		shutdownGrace: 5 * time.Second,
		close: func() {
			watchdogTicks.Stop()
			retentionTicks.Stop()
			st.Close()
		},
	}, nil
}

// announcingQueue is the dispatcher, which also tells the other instances
// of the tasks posted to it: one whose next look at the rows is later
// than a task's ETA wakes for it (postgres.Announcer says which it
// announces).
type announcingQueue struct {
	*local.Dispatcher
	announcer *postgres.Announcer
	now       func() time.Time
	logger    *slog.Logger
}

func (q announcingQueue) Post(ctx context.Context, tasks []task.Task) error {
	if err := q.Dispatcher.Post(ctx, tasks); err != nil {
		return err
	}
	// Tasks due now this instance runs at once (adopted, or claimed by the
	// dispatcher Post woke): only those to come are worth a wake-up.
	now := q.now()
	var earliest time.Time
	for _, t := range tasks {
		if t.ETA.After(now) && (earliest.IsZero() || t.ETA.Before(earliest)) {
			earliest = t.ETA
		}
	}
	if earliest.IsZero() {
		return nil
	}
	if err := q.announcer.Announce(ctx, earliest); err != nil && ctx.Err() == nil {
		// The others' polls find the tasks; only their wake-up is lost.
		q.logger.Warn("telling the other instances of a task failed", "err", err)
	}
	return nil
}

// turns passes on the ticks of in that turn says are this instance's.
func turns(ctx context.Context, in <-chan time.Time, turn func(time.Time) bool) <-chan time.Time {
	out := make(chan time.Time)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case at := <-in:
				if !turn(at) {
					continue
				}
				select {
				case out <- at:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// serviceFunc is a service of one function.
type serviceFunc func(ctx context.Context) error

func (f serviceFunc) Run(ctx context.Context) error { return f(ctx) }

// databaseName is the URL's host and database, for the log: never its
// user or password.
func databaseName(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return "(the URL given)"
	}
	return u.Host + u.Path
}
