package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/netutil"
	"golang.org/x/sync/errgroup"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/internal/idlegc"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/retention"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/pubsub"
	"github.com/sundial-cron/sundial/targets/swarming"
	"github.com/sundial-cron/sundial/targets/urlfetch"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// serveFlags are the settings of "sundial serve".
type serveFlags struct {
	backend       string // embedded or cloud
	cloud         cloudFlags
	db            string
	configDir     string
	repo          repoFlags // the config repos, when not configDir
	listen        string
	logFormat     string
	logLevel      slog.Level
	sync          sqlite.Sync
	commandCgroup string
	workers       int
	ahead         time.Duration
	refresh       time.Duration
	stopGrace     time.Duration
	maxCalls      int
	maxConns      int
	taskGrace     time.Duration
	urlAllow      []string
	urlDeny       []string
	metricsNames  bool
	signin        signin.Settings // sign-in settings (signin.go)
	accessFile    string
	access        access.Settings // read from accessFile at start
	auth          signin.Setup    // built from signin at start

	// commandProjects are the projects whose command targets run (never
	// in the cloud shape); commandUser the user they run as.
	commandProjects []string
	commandUser     string

	// pubsubGrants are the topics each project's pubsub jobs may publish
	// to, read from --pubsub-topics.
	pubsubGrants []pubsub.Grant

	// swarmingGrants are the realms each project's swarming jobs may run
	// tasks in, read from --swarming-realms; swarmingTopic is where
	// Swarming posts task ends (--swarming-pubsub-topic).
	swarmingGrants []swarming.Grant
	swarmingTopic  string
	// swarmingServers are the Swarming servers jobs may name, read from
	// --swarming-servers.
	swarmingServers []string
	// pushSecretFile holds the secret of the push tokens; pushSecret is
	// read from it at start. Without one, no push endpoint is served.
	pushSecretFile string
	pushSecret     []byte
	// pushOIDCAccount, if set, is the account whose OIDC token a push must
	// carry too: the push subscription's.
	pushOIDCAccount string

	// pollMin and pollMax bound the waits between polls of a running
	// attempt of an asynchronous target.
	pollMin, pollMax time.Duration
	// retention is the default history retention of jobs whose config
	// says nothing of theirs.
	retention engine.Retention
}

func parseServeFlags(args []string, stderr io.Writer) (serveFlags, error) {
	fs := flag.NewFlagSet("sundial serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serveFlags
	fs.StringVar(&f.backend, "backend", "embedded", "embedded (SQLite, in-process queue) or cloud (Cloud Datastore, Cloud Tasks, cron endpoints)")
	f.cloud.register(fs)
	registerSignin(fs, &f.signin)
	f.repo.register(fs)
	fs.StringVar(&f.accessFile, "access-file", "", "the server's access settings: administrators, groups, allow_anonymous (docs/auth.md)")
	fs.StringVar(&f.db, "db", "sundial.db", "the SQLite database file; created if missing")
	fs.StringVar(&f.configDir, "config-dir", "examples/configs", "the directory of project configs, one <project>.yaml each")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "where the console, the API and /metrics listen (cloud: :$PORT when PORT is set)")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json")
	fs.TextVar(&f.logLevel, "log-level", slog.LevelInfo, "debug (a line per launch and end), info, warn or error")
	syncMode := fs.String("sync", "full", "SQLite synchronous setting: full (survives power loss) or normal")
	fs.Func("command-projects", "comma-separated ids of the projects whose command targets run, as the server's user or --command-user (default: none; never in the cloud shape)", listFlag(&f.commandProjects))
	fs.StringVar(&f.commandUser, "command-user", "", "the Unix user (name or uid) commands run as, without supplementary groups; the server must run as root (default: the server's own user, who can read its database)")
	fs.StringVar(&f.commandCgroup, "command-cgroup", "", "the cgroup v2 directory under which each command attempt gets a cgroup (default: sundial-commands in the server's own cgroup, where it can make one); none: process groups and rlimits only")
	fs.IntVar(&f.workers, "workers", 0, "tasks handled at once (default: the dispatcher's)")
	fs.DurationVar(&f.ahead, "ahead", local.DefaultAhead, "how long before their time tasks are claimed, and a job's launch committed; its target is called at its time (0: at its time)")
	fs.DurationVar(&f.refresh, "config-refresh", time.Minute, "how often the config directory or repos are read again, give or take a tenth (SIGHUP reads them at once)")
	fs.DurationVar(&f.stopGrace, "stop-grace", 30*time.Second, "how long running invocations may go on after SIGTERM")
	fs.DurationVar(&f.taskGrace, "task-grace", statemachine.DefaultConfig.TaskGrace, "how late a task may be before the watchdog posts it again")
	fs.IntVar(&f.maxCalls, "max-calls-per-project", 64, "target calls one project may have in flight (0: no bound), so one project's hanging targets cannot take every worker")
	fs.IntVar(&f.maxConns, "max-connections", 1024, "HTTP connections served at once; more wait to be accepted, so callers cannot take the file descriptors jobs need")
	fs.Func("url-allow", "comma-separated CIDRs, IPs or host names (*.example.com) url_fetch jobs may call even where the defaults refuse", listFlag(&f.urlAllow))
	fs.Func("url-deny", "comma-separated CIDRs, IPs or host names url_fetch jobs may never call", listFlag(&f.urlDeny))
	fs.BoolVar(&f.metricsNames, "metrics-names", false, "label /metrics' series of jobs in trouble and refused configs with job and project ids; /metrics is open, so only where just your Prometheus reaches it")
	f.retention = engine.DefaultRetention
	fs.DurationVar(&f.retention.Age, "retention-age", f.retention.Age, "default age past which SUCCEEDED and skip records are deleted (a job's retention: overrides it)")
	fs.IntVar(&f.retention.Count, "retention-count", f.retention.Count, "default number of a job's newest SUCCEEDED and skip records kept")
	fs.DurationVar(&f.retention.FailureAge, "retention-failure-age", f.retention.FailureAge, "default age past which FAILED and ABORTED records are deleted")
	fs.IntVar(&f.retention.FailureCount, "retention-failure-count", f.retention.FailureCount, "default number of a job's newest FAILED and ABORTED records kept")
	var pubsubTopics []string
	fs.Func("pubsub-topics", "comma-separated PROJECT=TOPIC grants: the topics (projects/P/topics/T, or a prefix ending in *) a project's pubsub jobs may publish to (default: none, so no project publishes)", listFlag(&pubsubTopics))
	var swarmingRealms []string
	fs.Func("swarming-realms", "comma-separated PROJECT=REALM grants: the Swarming realms (luci-project:realm, or luci-project:* for all of one LUCI project) a project's swarming jobs may run tasks in (default: none)", listFlag(&swarmingRealms))
	fs.Func("swarming-servers", "comma-separated Swarming servers (https://host, or http:// to a loopback address) swarming jobs may name; the service's credentials go to them (default: none, so no swarming job runs)", listFlag(&f.swarmingServers))
	fs.StringVar(&f.swarmingTopic, "swarming-pubsub-topic", "", "projects/P/topics/T: the topic Swarming posts task ends to, whose push subscription calls "+pushPath+" (needs --push-secret-file; default: ends are found by polls alone)")
	fs.StringVar(&f.pushSecretFile, "push-secret-file", "", "a file holding the secret (at least 32 bytes) that signs and checks the tokens of pushes to "+pushPath+" (default: no push endpoint)")
	fs.StringVar(&f.pushOIDCAccount, "push-oidc-account", "", "the service account (email) whose OIDC token a push must also carry, for the audience --public-url + "+pushPath+": the push subscription's (default: the attempt's token alone admits a push)")
	fs.DurationVar(&f.pollMin, "poll-min", statemachine.DefaultConfig.MinPoll, "the first poll of a running Swarming task comes this long after its launch; the waits then double")
	fs.DurationVar(&f.pollMax, "poll-max", statemachine.DefaultConfig.MaxPoll, "the longest wait between two polls of a running Swarming task")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, p := range f.commandProjects {
		if !config.ValidProjectID(p) {
			return f, fmt.Errorf("--command-projects: %q is not a project id: want lower-case letters, digits, _ and -, starting with a letter or digit", p)
		}
	}
	for _, e := range pubsubTopics {
		g, err := pubsub.ParseGrant(e)
		if err != nil {
			return f, fmt.Errorf("--pubsub-topics: %v", err)
		}
		if !config.ValidProjectID(g.Project) {
			return f, fmt.Errorf("--pubsub-topics: %q: %q is not a project id: want lower-case letters, digits, _ and -, starting with a letter or digit", e, g.Project)
		}
		f.pubsubGrants = append(f.pubsubGrants, g)
	}
	for _, e := range swarmingRealms {
		g, err := swarming.ParseGrant(e)
		if err != nil {
			return f, fmt.Errorf("--swarming-realms: %v", err)
		}
		if !config.ValidProjectID(g.Project) {
			return f, fmt.Errorf("--swarming-realms: %q: %q is not a project id: want lower-case letters, digits, _ and -, starting with a letter or digit", e, g.Project)
		}
		f.swarmingGrants = append(f.swarmingGrants, g)
	}
	if f.pollMin < time.Second || f.pollMax < f.pollMin {
		return f, fmt.Errorf("--poll-min %s, --poll-max %s: want at least 1s, and a max no smaller than the min", f.pollMin, f.pollMax)
	}
	if f.pushOIDCAccount != "" && (f.pushSecretFile == "" || f.cloud.publicURL == "") {
		return f, fmt.Errorf("--push-oidc-account: needs --push-secret-file, and --public-url for the tokens' audience")
	}
	if f.swarmingTopic != "" && f.pushSecretFile == "" {
		return f, fmt.Errorf("--swarming-pubsub-topic: the pushes need --push-secret-file")
	}
	switch *syncMode {
	case "full":
		f.sync = sqlite.SyncFull
	case "normal":
		f.sync = sqlite.SyncNormal
	default:
		return f, fmt.Errorf("--sync %q: want full or normal", *syncMode)
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return f, fmt.Errorf("--log-format %q: want text or json", f.logFormat)
	}
	if r := f.retention; r.Age <= 0 || r.Count <= 0 || r.FailureAge <= 0 || r.FailureCount <= 0 {
		return f, errors.New("--retention-age, --retention-count, --retention-failure-age and --retention-failure-count must be positive")
	}
	if f.refresh <= 0 || f.taskGrace <= 0 || f.stopGrace < 0 || f.maxCalls < 0 || f.maxConns <= 0 {
		return f, errors.New("--config-refresh, --task-grace and --max-connections must be positive, --stop-grace and --max-calls-per-project not negative")
	}
	if f.ahead < 0 || f.ahead > engine.MaxAhead {
		return f, fmt.Errorf("--ahead %v: want 0 to %v (a launch is committed at most that far ahead)", f.ahead, engine.MaxAhead)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.repo.resolve(set); err != nil {
		return f, err
	}
	switch f.backend {
	case "embedded":
	case "cloud":
		// Instances of the cloud shape share no machine with the jobs'
		// owners; a command would run on whichever instance took the task.
		if len(f.commandProjects) > 0 || f.commandUser != "" {
			return f, errors.New("--command-projects, --command-user: the cloud shape never runs commands")
		}
		if port := os.Getenv("PORT"); port != "" && !set["listen"] {
			f.listen = ":" + port
		}
		return f, f.cloud.resolve()
	default:
		return f, fmt.Errorf("--backend %q: want embedded or cloud", f.backend)
	}
	return f, nil
}

// listFlag appends the comma-separated items of each use of a flag to list.
func listFlag(list *[]string) func(string) error {
	return func(v string) error {
		for item := range strings.SplitSeq(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				*list = append(*list, item)
			}
		}
		return nil
	}
}

// runServe runs "sundial serve": the embedded default, or the cloud shape,
// until SIGINT or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	f, err := parseServeFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial serve: %v\n", err)
		}
		return exitUsage
	}
	hopts := &slog.HandlerOptions{Level: f.logLevel}
	var h slog.Handler = slog.NewTextHandler(stderr, hopts)
	if f.logFormat == "json" {
		h = slog.NewJSONHandler(stderr, hopts)
	}
	logger := slog.New(h)
	if f.backend == "cloud" {
		if warning := f.cloud.offPlatform(os.Getenv); warning != "" {
			logger.Warn(warning)
		}
	}
	if f.pushSecretFile != "" {
		if f.pushSecret, err = readPushSecret(f.pushSecretFile); err != nil {
			logger.Error("sundial serve: --push-secret-file", "err", err)
			return 1
		}
	}
	if f.accessFile != "" {
		if f.access, err = config.ReadSettings(f.accessFile); err != nil {
			logger.Error("sundial serve: --access-file", "err", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.auth, err = buildSignin(ctx, f, now, logger); err != nil {
		logger.Error("sundial serve: sign-in", "err", err)
		return 1
	}
	serve := serveEmbedded
	if f.backend == "cloud" {
		serve = serveCloud
	}
	if err := serve(ctx, f, logger, now); err != nil {
		logger.Error("sundial serve stopped", "err", err)
		return 1
	}
	return 0
}

// embeddedConfig is the engine's configuration in the embedded shape. A
// StartInvocation comes again here only when the process that held it is
// dead (its lock file says so at once) or its lease ran out (and with it
// the handler's context): no live process can still be on its way to the
// target, so the grace before asking the target is kept short and a
// killed server's in-flight launch is settled within seconds.
func embeddedConfig(f serveFlags) statemachine.Config {
	c := statemachine.DefaultConfig
	c.LaunchGrace = time.Second
	c.TaskGrace = f.taskGrace
	c.MinPoll, c.MaxPoll = f.pollMin, f.pollMax
	return c
}

// serveEmbedded runs the embedded shape until ctx is done: the SQLite
// store, the in-process dispatcher, the watchdog ticker, the config
// refresher and the HTTP server, in one process.
func serveEmbedded(ctx context.Context, f serveFlags, logger *slog.Logger, now func() time.Time) error {
	// The server's own sockets, known once it listens: url_fetch never
	// calls them, whatever --url-allow says.
	self := &urlfetch.Listeners{}
	tgts, err := newTargets(targetOptions{
		commands:        true,
		commandProjects: f.commandProjects,
		commandUser:     f.commandUser,
		commandCgroup:   f.commandCgroup,
		pubsubGrants:    f.pubsubGrants,
		swarmingGrants:  f.swarmingGrants,
		swarmingTopic:   f.swarmingTopic,
		swarmingServers: f.swarmingServers,
		pushSecret:      f.pushSecret,
		logger:          logger,
		policy:          urlfetch.Policy{Allow: f.urlAllow, Deny: f.urlDeny},
		server:          self,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := closeTargets(tgts); err != nil {
			logger.Warn("closing the targets", "err", err)
		}
	}()
	if f.commandUser != "" {
		if err := checkPrivate(f.commandUser, secretFiles(f)); err != nil {
			return err
		}
	} else if len(f.commandProjects) > 0 && os.Geteuid() == 0 {
		logger.Warn("commands run as root, the server's user: a job of " + strings.Join(f.commandProjects, ", ") + " can do anything on this machine; set --command-user")
	}
	cfg := embeddedConfig(f)
	if cfg.RestoredAt, err = sqlite.Restored(ctx, f.db, now()); err != nil {
		return err
	}
	if !cfg.RestoredAt.IsZero() {
		logger.Warn("the database is a restored backup: occurrences scheduled before the first start on it are recorded as missed, and invocations of them that are queued end ABORTED, since they may have run after the backup was taken (docs/operations.md)",
			"first_start", cfg.RestoredAt)
	}
	st, err := sqlite.Open(f.db, sqlite.Options{Synchronous: f.sync})
	if err != nil {
		return err
	}
	defer st.Close()

	metrics := web.NewMetrics(st)
	var eng *engine.Engine
	disp := local.New(st, func(ctx context.Context, t task.Task) error { return eng.HandleTask(ctx, t) }, local.Options{
		Prepare:   func(ctx context.Context, t task.Task) (task.Handler, bool) { return eng.PrepareTask(ctx, t) },
		Workers:   f.workers,
		Ahead:     local.AheadOf(f.ahead),
		Idle:      idlegc.Start(ctx, now).Idle,
		Now:       now,
		Logger:    logger,
		LockDir:   f.db + ".owners",
		StopGrace: f.stopGrace,
	})
	watchdogTicks := time.NewTicker(time.Minute)
	defer watchdogTicks.Stop()
	notifier, err := webhooks(urlfetch.Policy{Allow: f.urlAllow, Deny: f.urlDeny}, self, now, metrics.Notified)
	if err != nil {
		return err
	}
	retentionTicks := time.NewTicker(time.Minute)
	defer retentionTicks.Stop()
	p := assemble(f, st, disp, tgts, notifier, cfg, metrics, logger, now, ticks{
		watchdog:  watchdogTicks.C,
		retention: retentionTicks.C,
		refresh:   refreshTicks(ctx, f.refresh),
	})
	eng = p.eng
	// A directory that cannot be read at all is the operator's mistake, and
	// better said now than as an empty server. The configs themselves are
	// applied once the server listens (the refresher's first pass): a
	// project of 100,000 jobs must not keep the API down, nor the jobs
	// already in the store from running.
	if _, err := os.ReadDir(f.configDir); err != nil && !f.repo.enabled() {
		return fmt.Errorf("--config-dir: %w", err)
	}

	handler, err := p.withPush(f, logger, now, f.auth.Mount(p.api()))
	if err != nil {
		return err
	}
	ln, srv, err := listen(f, handler)
	if err != nil {
		return err
	}
	if err := self.Add(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	logger.Info("listening", "addr", ln.Addr().String(), "backend", "embedded", "db", f.db, "config_dir", f.configDir, "command_projects", strings.Join(f.commandProjects, ","), "command_user", f.commandUser)
	if f.auth.SingleUser() {
		logger.Info("single-user mode: no sign-in is configured, so every caller on this machine is an administrator; others need a token", "admin_token", f.signin.AdminTokenFile != "")
	}
	return runServer(ctx, logger, ln, srv, 5*time.Second, disp, p.wd, p.retainer, p.configs)
}

// secretFiles are the files of the server's that no command may read: the
// database (every project's definitions, their headers included), the
// admin token, the static tokens' hashes, the session cookie keys and the
// OIDC client secret, and the push tokens' secret.
func secretFiles(f serveFlags) []string {
	files := append([]string{f.db, f.db + "-wal", f.db + "-shm"}, f.signin.SecretFiles()...)
	if f.pushSecretFile != "" {
		files = append(files, f.pushSecretFile)
	}
	return files
}

// checkPrivate refuses files that a user other than the server's may
// read: commands run as user could read them.
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

// ticks ask the background services for their work in the embedded shape;
// in the cloud shape cron asks over HTTP, and both are nil.
type ticks struct {
	watchdog, retention, refresh <-chan time.Time
}

// parts are what both shapes run over their own store and task queue.
type parts struct {
	eng *engine.Engine
	wd  *watchdog.Watchdog
	// retainer deletes history past its retention: every minute in the
	// embedded shape, after the watchdog's pass in the cloud's minute cron.
	retainer *retention.Retainer
	configs  *config.Refresher
	// api is the API and /metrics, behind sign-in.
	api func() http.Handler
}

func assemble(f serveFlags, st store.Store, q task.Queue, tgts map[string]targets.Target, notifier engine.Notifier, cfg statemachine.Config, metrics *web.Metrics, logger *slog.Logger, now func() time.Time, t ticks) parts {
	eng := engine.New(st, q, tgts, engine.Options{
		Now:                now,
		Config:             cfg,
		Logger:             logger,
		Observer:           observers{metrics, logObserver{logger}},
		Notifier:           notifier,
		MaxCallsPerProject: f.maxCalls,
		Retention:          f.retention,
	})
	metrics.Read(web.Sources{Store: st, Engine: eng, Now: now, Names: f.metricsNames})
	configs, err := f.repo.refresher(f.configDir, eng, st, config.RefresherOptions{
		Targets: tgts,
		Now:     now,
		Logger:  logger,
		Ticks:   t.refresh,
	})
	if err != nil {
		panic(err) // parseServeFlags made them once already
	}
	return parts{
		eng:      eng,
		wd:       watchdog.New(st, eng, watchdog.Options{Now: now, Logger: logger, Ticks: t.watchdog}),
		retainer: retention.New(st, eng, retention.Options{Now: now, Logger: logger, Ticks: t.retention, Defaults: f.retention}),
		configs:  configs,
		api: func() http.Handler {
			policy, err := f.auth.Policy(f.access)
			if err != nil {
				panic(err) // ReadSettings checked the file's settings whole
			}
			return web.New(web.Options{
				Engine:         eng,
				Store:          st,
				Metrics:        metrics,
				Authenticators: f.auth.Chain(),
				Policy:         policy,
				Now:            now,
				Logger:         logger,
				Reimport:       reimport(f, configs),
				WebhookSecret:  f.repo.webhookSecret,
				Console:        true,
				SignIn:         f.auth.SignInPath(),
			})
		},
	}
}

// reimport is the API's reimport of the config repos; nil for a
// directory, which SIGHUP reads again.
func reimport(f serveFlags, configs *config.Refresher) func(context.Context) error {
	if !f.repo.enabled() {
		return nil
	}
	return configs.Refresh
}

// listen listens on --listen for handler's server. Callers cannot hold
// the server's file descriptors, which its jobs need too (pipes, sockets,
// the database): at most --max-connections are accepted at once, a
// connection that sends no request header within 10 s or stays idle for
// 2 minutes is closed, and a request must arrive whole within a minute.
// There is no write timeout: in the cloud shape a task's request lasts as
// long as its target call.
func listen(f serveFlags, handler http.Handler) (net.Listener, *http.Server, error) {
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, nil, err
	}
	return netutil.LimitListener(ln, f.maxConns), &http.Server{
		Handler:           handler,
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

// refreshTicks ticks every period, give or take a tenth, and at every
// SIGHUP, until ctx is done.
func refreshTicks(ctx context.Context, period time.Duration) <-chan time.Time {
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
			case <-hup:
				at = time.Now()
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
