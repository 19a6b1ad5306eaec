package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/internal/sdnotify"
	"github.com/sundial-cron/sundial/retention"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/urlfetch"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/watchdog"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// NewLogger is the server's logger, in the settings' format and level.
func (s *Settings) NewLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: s.LogLevel}
	if s.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Run runs Sundial in the shape the settings name until ctx is done: the
// shape's store and task queue, and over them the engine, the watchdog,
// retention, the config refresher, sign-in, the API, the console and
// /metrics. now is the one clock everything reads.
func Run(ctx context.Context, s Settings, logger *slog.Logger, now func() time.Time) error {
	if err := s.Check(); err != nil {
		return err
	}
	if s.Shape == "cloud" {
		if warning := s.Cloud.offPlatform(os.Getenv); warning != "" {
			logger.Warn(warning)
		}
	}
	if err := s.readFiles(); err != nil {
		return err
	}
	var eng *engine.Engine
	b, err := shapes[s.Shape].open(ctx, &s, environment{
		logger:  logger,
		now:     now,
		handle:  func(ctx context.Context, t task.Task) error { return eng.HandleTask(ctx, t) },
		prepare: func(ctx context.Context, t task.Task) (task.Handler, bool) { return eng.PrepareTask(ctx, t) },
	})
	if err != nil {
		return err
	}
	defer b.close()
	in := s.SignIn
	in.PublicURL, in.LocalMode, in.OneProcess = s.Cloud.PublicURL, b.localMode, b.oneProcess
	auth, err := signin.New(ctx, in, b.revocations, now, logger)
	if err != nil {
		return fmt.Errorf("sign-in: %w", err)
	}
	roles, err := auth.Roles(s.access)
	if err != nil {
		return fmt.Errorf("--access-file: %w", err)
	}

	// The server's own sockets, known once it listens: url_fetch never
	// calls them, whatever --url-allow says.
	self := &urlfetch.Listeners{}
	egress := urlfetch.Egress{Allow: s.Egress.URLAllow, Deny: append(slices.Clone(s.Egress.URLDeny), b.ownHosts...)}
	tgts, err := s.openTargets(b, egress, self, logger)
	if err != nil {
		return err
	}
	defer func() {
		if err := closeTargets(tgts); err != nil {
			logger.Warn("closing the targets", "err", err)
		}
	}()

	metrics := web.NewMetrics(b.backlog, b.metrics...)
	notifier, err := webhooks(egress, self, now, metrics.Notified)
	if err != nil {
		return err
	}
	source, err := s.Configs.identity()
	if err != nil {
		return err
	}
	p := assemble(&s, b, auth, roles, tgts, notifier, metrics, logger, now, source)
	eng = p.eng
	if err := eng.ClaimConfigSource(ctx, source, s.Configs.Moved); err != nil {
		if errors.Is(err, engine.ErrOtherConfigSource) {
			return fmt.Errorf("%w. Servers on one database must read one config source: two would each remove the other's projects as gone from config. Start this one with the same source; or, if the configs moved here on purpose, with --config-moved, once every server reading the old source has stopped", err)
		}
		return err
	}
	// A directory that cannot be read at all is the operator's mistake, and
	// better said now than as an empty server. The configs themselves are
	// applied once the server listens (the refresher's first pass): a
	// project of 100,000 jobs must not keep the API down, nor the jobs
	// already in the store from running.
	if !s.Configs.FromRepos() {
		if _, err := os.ReadDir(s.Configs.Dir); err != nil {
			return fmt.Errorf("--config-dir: %w", err)
		}
	}

	handler, err := s.handler(p, b, auth, logger, now)
	if err != nil {
		return err
	}
	ln, srv, err := listen(&s, handler)
	if err != nil {
		return err
	}
	if err := self.Add(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	attrs := append([]any{"addr", ln.Addr().String(), "backend", s.Shape}, b.logAttrs...)
	logger.Info("listening", append(attrs, s.Configs.logAttrs()...)...)
	if auth.SingleUser() {
		logger.Info("single-user mode: no sign-in is configured, so every caller on this machine of the server's own user (or root) is an administrator; others need a token", "admin_token", s.SignIn.AdminTokenFile != "")
	}
	// The database is open and the listener accepts: a Type=notify unit
	// is started now, and its watchdog is petted while the store answers.
	if err := sdnotify.Ready(); err != nil {
		logger.Warn("telling systemd the server is ready", "err", err)
	}
	services := append(slices.Clone(b.services), p.passes...)
	services = append(services, systemdWatchdog{store: b.store, logger: logger})
	return runServer(ctx, logger, ln, srv, b.shutdownGrace, services...)
}

// openTargets makes the targets the server runs, which reach only egress
// and never the server's own sockets (self). Where the shape runs
// commands, it refuses to start while a secret is open to the commands'
// user (once the command target has said whether it can switch users at
// all), and warns when commands would run as root.
func (s *Settings) openTargets(b *backends, egress urlfetch.Egress, self *urlfetch.Listeners, logger *slog.Logger) (map[string]targets.Target, error) {
	tgts, err := newTargets(targetOptions{
		commands:        b.commands,
		commandProjects: s.Commands.Projects,
		commandUser:     s.Commands.User,
		commandCgroup:   s.Commands.Cgroup,
		pubsubGrants:    s.Egress.PubsubTopics,
		swarmingGrants:  s.Egress.SwarmingRealms,
		swarmingTopic:   s.Push.SwarmingTopic,
		swarmingServers: s.Egress.SwarmingServers,
		pushSecret:      s.pushSecret,
		logger:          logger,
		egress:          egress,
		server:          self,
	})
	if err != nil || !b.commands {
		return tgts, err
	}
	if s.Commands.User != "" {
		if err := checkPrivate(s.Commands.User, s.secretFiles(os.Getenv)); err != nil {
			closeTargets(tgts)
			return nil, err
		}
	} else if len(s.Commands.Projects) > 0 && os.Geteuid() == 0 {
		logger.Warn("commands run as root, the server's user: a job of " + strings.Join(s.Commands.Projects, ", ") + " can do anything on this machine; set --command-user")
	}
	return tgts, nil
}

// handler is everything the server answers: the shape's internal
// endpoints, the push endpoint, the sign-in flow, and the API, console
// and /metrics.
func (s *Settings) handler(p parts, b *backends, auth signin.Setup, logger *slog.Logger, now func() time.Time) (http.Handler, error) {
	handler, err := p.withPush(s, logger, now, auth.Mount(p.api))
	if err != nil || b.routes == nil {
		return handler, err
	}
	mux := http.NewServeMux()
	if err := b.routes(mux, p); err != nil {
		return nil, err
	}
	mux.Handle("/", handler)
	// web.New's own check comes after this mux, which would redirect
	// first.
	return web.Canonical(mux), nil
}

// secretFiles are the files and directories of the server's that no
// command may read: the database (every project's definitions, their
// headers included), the config directory (the same definitions, before
// they are applied), the admin token, the static tokens' hashes, the
// session cookie keys and the OIDC client secret, the push tokens'
// secret, the config repos' credentials and webhook secret, and the
// Google credentials the server runs with.
func (s *Settings) secretFiles(getenv func(string) string) []string {
	files := append([]string{s.DB, s.DB + "-wal", s.DB + "-shm"}, s.SignIn.SecretFiles()...)
	if !s.Configs.FromRepos() {
		files = append(files, s.Configs.Dir)
	}
	for _, name := range []string{
		s.Push.SecretFile, s.Configs.TokenFile, s.Configs.SSHKeyFile, s.Configs.WebhookSecretFile, getenv("GOOGLE_APPLICATION_CREDENTIALS"),
	} {
		if name != "" {
			files = append(files, name)
		}
	}
	return files
}

// checkPrivate refuses files and directories that a user other than the
// server's may read (or, a directory, enter): commands run as user could
// read them.
func checkPrivate(user string, files []string) error {
	for _, name := range files {
		fi, err := os.Stat(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return fmt.Errorf("--command-user %s: %s is readable by users other than the server's (mode %v): chmod go-rwx it, or commands could read it", user, name, fi.Mode().Perm())
		}
	}
	return nil
}

// ticks ask the background passes for their work in-process; where cron
// asks over HTTP, they are nil.
type ticks struct {
	watchdog, retention, refresh <-chan time.Time
}

// parts are what every shape runs over its own store and task queue.
type parts struct {
	eng *engine.Engine
	wd  *watchdog.Watchdog
	// retainer deletes history past its retention: every minute where the
	// passes tick in-process, after the watchdog's pass in the cloud's
	// minute cron.
	retainer *retention.Retainer
	configs  *config.Refresher
	// passes are the services that run the passes in-process: none where
	// cron calls them over HTTP.
	passes []service
	// api is the API, the console and /metrics.
	api http.Handler
}

func assemble(s *Settings, b *backends, auth signin.Setup, roles *access.Roles, tgts map[string]targets.Target, notifier engine.Notifier, metrics *web.Metrics, logger *slog.Logger, now func() time.Time, source string) parts {
	eng := engine.New(b.store, b.queue, tgts, engine.Options{
		Now:                now,
		Config:             b.config,
		Logger:             logger,
		Observer:           observers{metrics, logObserver{logger}},
		Notifier:           notifier,
		MaxCallsPerProject: s.MaxCallsPerProject,
		Retention:          s.Retention,
		Objective:          s.Objective,
	})
	metrics.Read(web.Sources{Store: b.store, Engine: eng, Now: now, Names: s.MetricsNames})
	configs, err := s.Configs.refresher(&s.repoResources, eng, b.store, config.RefresherOptions{
		Targets: tgts,
		Now:     now,
		Logger:  logger,
		Ticks:   b.ticks.refresh,
		Source:  source,
	})
	if err != nil {
		panic(err) // Check made them once already
	}
	p := parts{
		eng:      eng,
		wd:       watchdog.New(b.store, eng, watchdog.Options{Now: now, Logger: logger, Ticks: b.ticks.watchdog}),
		retainer: retention.New(b.store, eng, retention.Options{Now: now, Logger: logger, Ticks: b.ticks.retention}),
		configs:  configs,
	}
	if b.ticks.watchdog != nil {
		p.passes = []service{p.wd, p.retainer, p.configs}
	}
	p.api = web.New(web.Options{
		Engine:         eng,
		Store:          b.store,
		Metrics:        metrics,
		Authenticators: auth.Chain(),
		Roles:          roles,
		Now:            now,
		Logger:         logger,
		Reimport:       s.reimport(configs),
		WebhookSecret:  s.repoResources.webhookSecret,
		Console:        true,
		SignIn:         auth.SignInPath(),
		Instances:      b.instances,
	})
	return p
}

// reimport is the API's reimport of the config repos; nil for a
// directory, which SIGHUP reads again.
func (s *Settings) reimport(configs *config.Refresher) func(context.Context) (web.Refused, error) {
	if !s.Configs.FromRepos() {
		return nil
	}
	return func(ctx context.Context) (web.Refused, error) { return configs.Reimport(ctx) }
}

// listen listens on s.Listen for handler's server. Callers cannot hold
// the server's file descriptors, which its jobs need too (pipes, sockets,
// the database): at most MaxConnections are open at once, and when all
// are taken the one that waited longest for a request makes room
// (connLimit); a connection that sends no request header within 10 s or
// stays idle for 2 minutes is closed, and a request must arrive whole
// within a minute. There is no write timeout: in the cloud shape a task's
// request lasts as long as its target call.
func listen(s *Settings, handler http.Handler) (net.Listener, *http.Server, error) {
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return nil, nil, err
	}
	limited := limitConns(ln, s.MaxConnections)
	return limited, &http.Server{
		Handler: handler,
		// Who owns a loopback caller's end decides whether it is the
		// operator (signin.LocalCaller).
		ConnContext:       signin.ConnContext,
		ConnState:         limited.ConnState,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
	}, nil
}

// service is a background service of the server: the dispatcher, the
// watchdog, the config refresher. Run returns when ctx is done.
type service interface {
	Run(ctx context.Context) error
}

// runServer serves srv on ln and runs each of services until ctx is done or
// one of them fails. Then it stops the services, gives requests under way
// up to shutdownGrace, and waits for the services to return.
func runServer(ctx context.Context, logger *slog.Logger, ln net.Listener, srv *http.Server, shutdownGrace time.Duration, services ...service) error {
	g, runCtx := errgroup.WithContext(ctx)
	for _, s := range services {
		g.Go(func() error { return s.Run(runCtx) })
	}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-runCtx.Done()
		if ctx.Err() != nil {
			logger.Info("stopping: no new tasks; running invocations have until the grace ends")
			if err := sdnotify.Stopping(); err != nil {
				logger.Warn("telling systemd the server is stopping", "err", err)
			}
		}
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		srv.Shutdown(shutdown)
		return nil
	})
	err := g.Wait()
	logger.Info("stopped")
	return err
}

// systemdWatchdog pets systemd's watchdog (WatchdogSec=) while the store
// answers (store.Answers) within half the interval: a server whose
// database hangs is restarted. It asks nothing of the HTTP server, which
// callers can keep busy on purpose.
type systemdWatchdog struct {
	store  store.Store
	logger *slog.Logger
}

func (w systemdWatchdog) Run(ctx context.Context) error {
	return sdnotify.Watchdog(ctx, w.logger, func(ctx context.Context) error { return store.Answers(ctx, w.store) })
}

// refreshTicks ticks every period, give or take a tenth, and at every
// SIGHUP, until ctx is done. With turn, a periodic tick comes only where
// turn says it is this instance's (one refresh a period across a fleet);
// a SIGHUP is the operator asking this instance, and always ticks.
func refreshTicks(ctx context.Context, period time.Duration, now func() time.Time, turn func(at time.Time) bool) <-chan time.Time {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ticks := make(chan time.Time)
	go func() {
		defer signal.Stop(hup)
		defer close(ticks)
		// A tenth of jitter keeps instances, and servers started together,
		// from asking a shared config repo at the same second.
		jittered := func() time.Duration { return period - period/10 + rand.N(period/5+1) }
		t := time.NewTimer(jittered())
		defer t.Stop()
		for {
			var at time.Time
			select {
			case <-ctx.Done():
				return
			case at = <-t.C:
				t.Reset(jittered())
				if turn != nil && !turn(at) {
					continue
				}
			case <-hup:
				at = now()
			}
			select {
			case ticks <- at:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ticks
}
