package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sundial-cron/sundial/server"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets/pubsub"
	"github.com/sundial-cron/sundial/targets/swarming"
)

// serveFlags registers the flags of "sundial serve" on fs, each writing
// into s, whose values are the flags' defaults. It returns what must run
// once fs is parsed to finish s.
func serveFlags(fs *flag.FlagSet, s *server.Settings) (finish func() error) {
	fs.StringVar(&s.Shape, "backend", s.Shape, "the shape: "+strings.Join(server.ShapeNames(), ", ")+" (embedded: SQLite, in-process queue; postgres: any number of instances on one PostgreSQL; cloud: Cloud Datastore, Cloud Tasks, cron endpoints)")
	fs.StringVar(&s.Listen, "listen", s.Listen, "where the console, the API and /metrics listen (cloud: :$PORT when PORT is set)")
	fs.IntVar(&s.MaxConnections, "max-connections", s.MaxConnections, "HTTP connections open at once, so callers cannot take the file descriptors jobs need; when all are open, the one that waited longest for a request makes room")
	fs.StringVar(&s.LogFormat, "log-format", s.LogFormat, "text or json")
	fs.TextVar(&s.LogLevel, "log-level", s.LogLevel, "debug (a line per launch and end), info, warn or error")
	fs.BoolVar(&s.MetricsNames, "metrics-names", s.MetricsNames, "label /metrics' series of jobs in trouble and refused configs with job and project ids; /metrics is open, so only where just your Prometheus reaches it")

	fs.StringVar(&s.DB, "db", s.DB, "the SQLite database file; created if missing")
	syncMode := fs.String("sync", "full", "SQLite synchronous setting: full (survives power loss) or normal")
	fs.StringVar(&s.Postgres.URL, "database-url", s.Postgres.URL, "postgres: the database, postgres://user@host/db (default $SUNDIAL_DATABASE_URL, which keeps a password out of ps; or give the password in ~/.pgpass or $PGPASSWORD)")
	fs.StringVar(&s.Postgres.ListenURL, "database-listen-url", s.Postgres.ListenURL, "postgres: a direct connection to the database for LISTEN, where --database-url goes through PgBouncer in transaction mode, which keeps no session (default $SUNDIAL_DATABASE_LISTEN_URL, else --database-url)")
	fs.IntVar(&s.Postgres.MaxConns, "database-max-conns", s.Postgres.MaxConns, "postgres: connections this instance opens at most; the sum over the instances must stay under the server's max_connections")
	fs.IntVar(&s.Workers, "workers", s.Workers, "tasks handled at once (default: the dispatcher's)")
	fs.DurationVar(&s.Ahead, "ahead", s.Ahead, "how long before their time tasks are claimed, and a job's launch committed; its target is called at its time (0: at its time)")

	fs.DurationVar(&s.TaskGrace, "task-grace", s.TaskGrace, "how late a task may be before the watchdog posts it again")
	fs.DurationVar(&s.StopGrace, "stop-grace", s.StopGrace, "how long running invocations may go on after SIGTERM")
	fs.IntVar(&s.MaxCallsPerProject, "max-calls-per-project", s.MaxCallsPerProject, "target calls one project may have in flight (0: no bound), so one project's hanging targets cannot take every worker")
	fs.DurationVar(&s.PollMin, "poll-min", s.PollMin, "the first poll of a running Swarming task comes this long after its launch; the waits then double")
	fs.DurationVar(&s.PollMax, "poll-max", s.PollMax, "the longest wait between two polls of a running Swarming task")
	fs.DurationVar(&s.Retention.Age, "retention-age", s.Retention.Age, "default age past which SUCCEEDED and skip records are deleted (a job's retention: overrides it)")
	fs.IntVar(&s.Retention.Count, "retention-count", s.Retention.Count, "default number of a job's newest SUCCEEDED and skip records kept")
	fs.DurationVar(&s.Retention.FailureAge, "retention-failure-age", s.Retention.FailureAge, "default age past which FAILED and ABORTED records are deleted")
	fs.IntVar(&s.Retention.FailureCount, "retention-failure-count", s.Retention.FailureCount, "default number of a job's newest FAILED and ABORTED records kept")
	fs.DurationVar(&s.Objective.Lateness, "slo-lateness", s.Objective.Lateness, "default lateness objective of jobs whose config has no slo: how late after its time a launch is still on time (default: none)")
	fs.Func("slo-on-time", "default share of launches that must be on time, as a percentage (default 99%)", percentFlag(&s.Objective.OnTime))
	fs.Func("slo-success", "default success objective of jobs whose config has no slo: the share of ended invocations that must succeed, such as 99% (default: none)", percentFlag(&s.Objective.Success))
	fs.Func("slo-window", "default window the objectives are measured over, in days (7d) or as a duration (default 7d)", func(v string) (err error) {
		s.Objective.Window, err = slo.ParseWindow(v)
		return err
	})

	fs.Func("command-projects", "comma-separated ids of the projects whose command targets run, as the server's user or --command-user (default: none; never in the cloud shape)", listFlag(&s.Commands.Projects))
	fs.StringVar(&s.Commands.User, "command-user", s.Commands.User, "the Unix user (name or uid) commands run as, without supplementary groups; the server must run as root (default: the server's own user, who can read its database)")
	fs.StringVar(&s.Commands.Cgroup, "command-cgroup", s.Commands.Cgroup, "the cgroup v2 directory under which each command attempt gets a cgroup (default: sundial-commands in the server's own cgroup, where it can make one); none: process groups and rlimits only")

	fs.Func("url-allow", "comma-separated CIDRs, IPs or host names (*.example.com) url_fetch jobs may call even where the defaults refuse", listFlag(&s.Egress.URLAllow))
	fs.Func("url-deny", "comma-separated CIDRs, IPs or host names url_fetch jobs may never call", listFlag(&s.Egress.URLDeny))
	var pubsubTopics, swarmingRealms []string
	fs.Func("pubsub-topics", "comma-separated PROJECT=TOPIC grants: the topics (projects/P/topics/T, or a prefix ending in *) a project's pubsub jobs may publish to (default: none, so no project publishes)", listFlag(&pubsubTopics))
	fs.Func("swarming-realms", "comma-separated PROJECT=REALM grants: the Swarming realms (luci-project:realm, or luci-project:* for all of one LUCI project) a project's swarming jobs may run Swarming tasks in (default: none)", listFlag(&swarmingRealms))
	fs.Func("swarming-servers", "comma-separated Swarming servers (https://host, or http:// to a loopback address) swarming jobs may name; the service's credentials go to them (default: none, so no swarming job runs)", listFlag(&s.Egress.SwarmingServers))
	fs.StringVar(&s.Push.SwarmingTopic, "swarming-pubsub-topic", s.Push.SwarmingTopic, "projects/P/topics/T: the topic Swarming posts Swarming task ends to, whose push subscription calls "+server.PushPath+" (needs --push-secret-file; default: ends are found by polls alone)")
	fs.StringVar(&s.Push.SecretFile, "push-secret-file", s.Push.SecretFile, "a file holding the secret (at least 32 bytes) that signs and checks the tokens of pushes to "+server.PushPath+" (default: no push endpoint)")
	fs.StringVar(&s.Push.OIDCAccount, "push-oidc-account", s.Push.OIDCAccount, "the service account (email) whose OIDC token a push must also carry, for the audience --public-url + "+server.PushPath+": the push subscription's (default: the attempt's token alone admits a push)")

	fs.StringVar(&s.AccessFile, "access-file", s.AccessFile, "the server's access settings: administrators, groups, allow_anonymous (docs/auth.md)")
	signInFlags(fs, &s.SignIn)
	configFlags(fs, &s.Configs)
	cloudFlags(fs, &s.Cloud)

	return func() error {
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		for _, e := range pubsubTopics {
			g, err := pubsub.ParseTopicGrant(e)
			if err != nil {
				return fmt.Errorf("--pubsub-topics: %v", err)
			}
			s.Egress.PubsubTopics = append(s.Egress.PubsubTopics, g)
		}
		for _, e := range swarmingRealms {
			g, err := swarming.ParseRealmGrant(e)
			if err != nil {
				return fmt.Errorf("--swarming-realms: %v", err)
			}
			s.Egress.SwarmingRealms = append(s.Egress.SwarmingRealms, g)
		}
		switch *syncMode {
		case "full":
			s.Sync = sqlite.SyncFull
		case "normal":
			s.Sync = sqlite.SyncNormal
		default:
			return fmt.Errorf("--sync %q: want full or normal", *syncMode)
		}
		given := map[string]bool{}
		fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
		if err := checkConfigFlags(given, &s.Configs); err != nil {
			return err
		}
		if port := os.Getenv("PORT"); port != "" && s.Shape == "cloud" && !given["listen"] {
			s.Listen = ":" + port
		}
		return nil
	}
}

// parseServe turns serve's arguments into checked settings.
func parseServe(args []string, stderr io.Writer) (server.Settings, error) {
	fs := flag.NewFlagSet("sundial serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	s := server.Defaults(os.Getenv)
	finish := serveFlags(fs, &s)
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if err := finish(); err != nil {
		return s, err
	}
	return s, s.Check()
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

// runServe runs "sundial serve" until SIGINT or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	s, err := parseServe(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "sundial serve: %v\n", err)
		}
		return exitUsage
	}
	logger := s.NewLogger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, s, logger, now); err != nil {
		logger.Error("sundial serve stopped", "err", err)
		return 1
	}
	return 0
}

// percentFlag reads a percentage ("99.9%") into a fraction.
func percentFlag(out *float64) func(string) error {
	return func(v string) (err error) {
		*out, err = slo.ParsePercent(v)
		return err
	}
}
