// Package server is what a running Sundial is: its settings, with their
// defaults and the check that names a bad one, and its shapes (shapes.go),
// the one place where a store and a task queue are chosen. Everything a
// shape runs over them (engine, watchdog, retention, config refresher,
// console, API, sign-in, targets) is wired here once, for every shape.
//
// cmd/sundial turns flags into Settings; the lab's whole-server benchmark
// builds the same Settings from Defaults, so neither can drift from serve.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/config"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/postgres"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets/pubsub"
	"github.com/sundial-cron/sundial/targets/swarming"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/web/signin"
)

// Settings are everything an operator says of a running Sundial. Errors
// name each setting by its `sundial serve` flag, the name operators know
// it by.
type Settings struct {
	// Shape is the name of the shape to run (Shapes lists them).
	Shape string

	// Listen is where the console, the API and /metrics listen.
	Listen string
	// MaxConnections bounds the HTTP connections served at once.
	MaxConnections int
	// LogFormat is text or json; LogLevel the least level logged.
	LogFormat string
	LogLevel  slog.Level
	// MetricsNames labels /metrics' series of jobs in trouble and refused
	// configs with their ids.
	MetricsNames bool

	// DB is the embedded shape's SQLite file; Sync its durability.
	DB   string
	Sync sqlite.Sync
	// Workers are the tasks handled at once (0: the dispatcher's default);
	// Ahead how long before its time a task is claimed and an idle job's
	// launch committed.
	Workers int
	Ahead   time.Duration

	// Configs say where the projects' configs come from.
	Configs ConfigSource

	// TaskGrace is how late a task may be before the watchdog posts it
	// again; StopGrace how long running invocations may go on after
	// SIGTERM.
	TaskGrace, StopGrace time.Duration
	// MaxCallsPerProject bounds one project's target calls in flight (0:
	// no bound).
	MaxCallsPerProject int
	// PollMin and PollMax bound the waits between polls of a running
	// attempt of an asynchronous target.
	PollMin, PollMax time.Duration
	// Retention is the history kept of jobs whose config says nothing of
	// theirs.
	Retention engine.Retention
	// Objective is the lateness and success objectives of jobs whose
	// config says nothing of theirs; the zero value sets none.
	Objective slo.Objective

	// Egress is what jobs' targets may reach.
	Egress Egress
	// Commands say which projects' command targets run, and as whom.
	Commands Commands
	// Push is how remote systems report the ends of attempts.
	Push Push

	// AccessFile names the server's administrators and groups.
	AccessFile string
	// SignIn is how people and machines prove who they are. Run sets its
	// PublicURL (Cloud.PublicURL) and LocalMode (the shape's).
	SignIn signin.Settings

	// Cloud are the cloud shape's settings.
	Cloud Cloud
	// Postgres are the PostgreSQL shape's settings.
	Postgres Postgres

	// What the files named above hold, read by Check and Run.
	access        access.Settings
	pushSecret    []byte
	repoResources repoResources
}

// Egress is what jobs' targets may reach beyond the defaults.
type Egress struct {
	// URLAllow and URLDeny are CIDRs, IPs or host names url_fetch jobs
	// (and notify webhooks) may or may not call.
	URLAllow, URLDeny []string
	// PubsubTopics are the topics each project's pubsub jobs may publish
	// to.
	PubsubTopics []pubsub.TopicGrant
	// SwarmingRealms are the realms each project's swarming jobs may run
	// Swarming tasks in; SwarmingServers the servers they may name.
	SwarmingRealms  []swarming.RealmGrant
	SwarmingServers []string
}

// Commands are the settings of the command target, which the embedded
// and PostgreSQL shapes run (on whichever instance claims the task).
type Commands struct {
	// Projects are the projects whose command targets run.
	Projects []string
	// User is the Unix user commands run as; "": the server's.
	User string
	// Cgroup is where each command attempt gets a cgroup ("": under the
	// server's own; none: process groups and rlimits only).
	Cgroup string
}

// Push is how remote systems report the ends of the attempts they run.
type Push struct {
	// SecretFile holds the secret the push tokens are signed with;
	// without one no push endpoint is served.
	SecretFile string
	// OIDCAccount, if set, is the account whose OIDC token a push must
	// carry too: the push subscription's.
	OIDCAccount string
	// SwarmingTopic is the topic Swarming posts Swarming task ends to.
	SwarmingTopic string
}

// Defaults are the settings of `sundial serve` given no flag; getenv is
// the environment, from which the cloud shape and the config repo take
// their defaults (App Engine and Cloud Run set some of it).
func Defaults(getenv func(string) string) Settings {
	envOr := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	return Settings{
		Shape:          "embedded",
		Listen:         "127.0.0.1:8080",
		MaxConnections: 1024,
		LogFormat:      "text",
		LogLevel:       slog.LevelInfo,
		DB:             "sundial.db",
		Sync:           sqlite.SyncFull,
		Ahead:          local.DefaultAhead,
		Configs: ConfigSource{
			Dir:          "examples/configs",
			Refresh:      time.Minute,
			Repo:         getenv("SUNDIAL_CONFIG_REPO"),
			Ref:          envOr("SUNDIAL_CONFIG_REF", "main"),
			Path:         envOr("SUNDIAL_CONFIG_PATH", "projects/"),
			User:         "git",
			GoogleAuth:   getenv("SUNDIAL_CONFIG_GOOGLE_AUTH") == "true",
			Link:         getenv("SUNDIAL_CONFIG_LINK"),
			MaxBytes:     config.DefaultMaxRepoBytes,
			FetchTimeout: time.Minute,
		},
		TaskGrace:          statemachine.DefaultConfig.TaskGrace,
		StopGrace:          30 * time.Second,
		MaxCallsPerProject: 64,
		PollMin:            statemachine.DefaultConfig.MinPoll,
		PollMax:            statemachine.DefaultConfig.MaxPoll,
		Retention:          engine.DefaultRetention,
		SignIn:             signin.Settings{SessionTTL: signin.DefaultSessionTTL},
		Postgres: Postgres{
			URL:       getenv("SUNDIAL_DATABASE_URL"),
			ListenURL: getenv("SUNDIAL_DATABASE_LISTEN_URL"),
			MaxConns:  postgres.DefaultMaxConns,
		},
		Cloud: Cloud{
			Project:   getenv("GOOGLE_CLOUD_PROJECT"),
			Platform:  platformOf(getenv),
			Queue:     envOr("SUNDIAL_TASKS_QUEUE", "sundial-tasks"),
			Location:  getenv("SUNDIAL_TASKS_LOCATION"),
			PublicURL: getenv("SUNDIAL_URL"),
			Invoker:   getenv("SUNDIAL_INVOKER"),
			Namespace: getenv("SUNDIAL_NAMESPACE"),
		},
	}
}

// Check refuses settings a server cannot run with, naming the bad one. It
// reads the files of the config repos' settings (credentials, the projects
// list), which decide whether the sources can be made at all; Run reads
// the server's own secrets as it starts.
func (s *Settings) Check() error {
	sh, ok := shapes[s.Shape]
	if !ok {
		return fmt.Errorf("--backend %q: want %s", s.Shape, strings.Join(ShapeNames(), " or "))
	}
	for _, p := range s.Commands.Projects {
		if err := checkProjectID(p); err != nil {
			return fmt.Errorf("--command-projects: %w", err)
		}
	}
	for _, g := range s.Egress.PubsubTopics {
		if err := checkProjectID(g.Project); err != nil {
			return fmt.Errorf("--pubsub-topics: %w", err)
		}
	}
	for _, g := range s.Egress.SwarmingRealms {
		if err := checkProjectID(g.Project); err != nil {
			return fmt.Errorf("--swarming-realms: %w", err)
		}
	}
	if s.PollMin < time.Second || s.PollMax < s.PollMin {
		return fmt.Errorf("--poll-min %s, --poll-max %s: want at least 1s, and a max no smaller than the min", s.PollMin, s.PollMax)
	}
	if s.Push.OIDCAccount != "" && (s.Push.SecretFile == "" || s.Cloud.PublicURL == "") {
		return errors.New("--push-oidc-account: needs --push-secret-file, and --public-url for the tokens' audience")
	}
	if s.Push.SwarmingTopic != "" && s.Push.SecretFile == "" {
		return errors.New("--swarming-pubsub-topic: the pushes need --push-secret-file")
	}
	if s.LogFormat != "text" && s.LogFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", s.LogFormat)
	}
	if r := s.Retention; r.Age <= 0 || r.Count <= 0 || r.FailureAge <= 0 || r.FailureCount <= 0 {
		return errors.New("--retention-age, --retention-count, --retention-failure-age and --retention-failure-count must be positive")
	}
	if err := s.Objective.Check(); err != nil {
		return fmt.Errorf("--slo-%s", strings.Replace(err.Error(), "_", "-", 1))
	}
	if o := s.Objective; o.OnTime > 0 && o.Lateness == 0 {
		return errors.New("--slo-on-time: applies only with --slo-lateness, which says what on time is")
	}
	if s.Configs.Refresh <= 0 || s.TaskGrace <= 0 || s.StopGrace < 0 || s.MaxCallsPerProject < 0 || s.MaxConnections <= 0 {
		return errors.New("--config-refresh, --task-grace and --max-connections must be positive, --stop-grace and --max-calls-per-project not negative")
	}
	if s.Ahead < 0 || s.Ahead > engine.MaxAhead {
		return fmt.Errorf("--ahead %v: want 0 to %v (a launch is committed at most that far ahead)", s.Ahead, engine.MaxAhead)
	}
	if s.Workers < 0 {
		return fmt.Errorf("--workers %d: want 0 (the default) or more", s.Workers)
	}
	if err := sh.check(s); err != nil {
		return err
	}
	return s.Configs.check(&s.repoResources)
}

// readFiles reads the secrets and the access settings the settings name.
func (s *Settings) readFiles() error {
	var err error
	if s.Push.SecretFile != "" {
		if s.pushSecret, err = readPushSecret(s.Push.SecretFile); err != nil {
			return fmt.Errorf("--push-secret-file: %w", err)
		}
	}
	if s.AccessFile != "" {
		if s.access, err = config.ReadSettings(s.AccessFile); err != nil {
			return fmt.Errorf("--access-file: %w", err)
		}
	}
	return nil
}

// checkProjectID says why id cannot be a project's id, if it cannot.
func checkProjectID(id string) error {
	if !config.ValidProjectID(id) {
		return fmt.Errorf("%q is not a project id: want lower-case letters, digits, _ and -, starting with a letter or digit", id)
	}
	return nil
}
