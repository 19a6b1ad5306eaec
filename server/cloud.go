package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	gcloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	gcds "cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/internal/standin"
	"github.com/sundial-cron/sundial/retention"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/datastore"
	"github.com/sundial-cron/sundial/task/cloudtasks"
	"github.com/sundial-cron/sundial/watchdog"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// The cloud shape's internal endpoints: where Cloud Tasks delivers tasks,
// and where App Engine cron (cron.yaml) or Cloud Scheduler calls the
// once-a-minute passes.
const (
	TasksPath    = "/internal/tasks"
	WatchdogPath = "/internal/cron/watchdog"
	RefreshPath  = "/internal/cron/refresh"
)

// Cloud are the cloud shape's settings. Defaults takes each from the
// environment App Engine or Cloud Run gives the instance (docs/deploy.md),
// so a deployment passes only --backend=cloud.
type Cloud struct {
	Project   string // the Google Cloud project of Datastore and Cloud Tasks
	Platform  string // appengine or cloudrun: who may call the internal endpoints
	Queue     string // the Cloud Tasks queue's short name
	Location  string // the queue's region
	PublicURL string // the server's URL as callers reach it; cloudrun: what tasks and tokens are for
	Invoker   string // cloudrun: the account Cloud Tasks and Cloud Scheduler sign as
	Namespace string // the Datastore namespace
	// TasksEndpoint is a Cloud Tasks stand-in to talk to in plain text,
	// without credentials: for running the cloud shape on one machine.
	TasksEndpoint string
}

// checkCloud checks the settings the cloud shape needs. Instances of the
// cloud shape share no machine with the jobs' owners: a command would run
// on whichever instance took the task, so it runs none.
func checkCloud(s *Settings) error {
	if len(s.Commands.Projects) > 0 || s.Commands.User != "" {
		return errors.New("--command-projects, --command-user: the cloud shape never runs commands")
	}
	return s.Cloud.check()
}

// check checks the settings the cloud shape needs.
func (c *Cloud) check() error {
	var missing []string
	for _, req := range []struct{ name, value string }{
		{"--gcp-project", c.Project}, {"--tasks-queue", c.Queue}, {"--tasks-location", c.Location},
	} {
		if req.value == "" {
			missing = append(missing, req.name)
		}
	}
	switch c.Platform {
	case "appengine":
	case "cloudrun":
		if c.PublicURL == "" {
			missing = append(missing, "--public-url")
		}
		if c.Invoker == "" {
			missing = append(missing, "--invoker")
		}
		c.PublicURL = strings.TrimSuffix(c.PublicURL, "/")
	case "":
		return errors.New("--platform: the environment is neither App Engine nor Cloud Run; say appengine or cloudrun")
	default:
		return fmt.Errorf("--platform %q: want appengine or cloudrun", c.Platform)
	}
	if len(missing) > 0 {
		return fmt.Errorf("--backend=cloud needs %s", strings.Join(missing, ", "))
	}
	return nil
}

// platformOf is the platform the environment says this runs on.
func platformOf(getenv func(string) string) string {
	switch {
	case getenv("GAE_ENV") != "":
		return "appengine"
	case getenv("K_SERVICE") != "":
		return "cloudrun"
	}
	return ""
}

// offPlatform returns a warning when the environment does not say this
// runs on the platform --platform names, "" when it does. Running off the
// platform is how the cloud shape is tried on one machine, so it is not
// refused; but on App Engine the internal endpoints trust headers only the
// platform can set, and anywhere else anyone who reaches the port can set
// them.
func (c *Cloud) offPlatform(getenv func(string) string) string {
	var want []string
	var risk string
	switch c.Platform {
	case "appengine":
		want = []string{"GAE_APPLICATION", "GAE_ENV", "GAE_SERVICE"}
		risk = "the task and cron endpoints admit any request carrying X-AppEngine-QueueName or X-Appengine-Cron, " +
			"headers only App Engine strips from outside requests: here anyone who reaches the port can run tasks and cron passes"
	case "cloudrun":
		want = []string{"K_SERVICE"}
		risk = "the task and cron endpoints still need Google-signed tokens for --public-url, so this is safe, but tasks go to --public-url, not here"
	}
	var missing []string
	for _, name := range want {
		if getenv(name) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("--platform=%s, but this is not %s: %s not set; %s", c.Platform, platformNames[c.Platform], strings.Join(missing, ", "), risk)
}

var platformNames = map[string]string{"appengine": "App Engine", "cloudrun": "Cloud Run"}

// QueueName is the queue's full resource name.
func (c *Cloud) QueueName() string {
	return fmt.Sprintf("projects/%s/locations/%s/queues/%s", c.Project, c.Location, c.Queue)
}

// gates returns who may call the task endpoint and the cron endpoints, and
// where Cloud Tasks delivers tasks. On App Engine the platform strips the
// X-AppEngine-* and X-CloudTasks-* headers from outside requests, so their
// presence is proof; on Cloud Run any header can come from outside, so each
// request must carry a token Google signed for the invoker account.
func (c *Cloud) gates(now func() time.Time) (tasks web.Gate, cron func(path string) (web.Gate, error), target cloudtasks.Destination, err error) {
	if c.Platform == "appengine" {
		cronGate := web.AppEngineCron()
		return web.AppEngineQueue(c.Queue),
			func(string) (web.Gate, error) { return cronGate, nil },
			cloudtasks.AppEngine{Service: os.Getenv("GAE_SERVICE"), Path: TasksPath}, nil
	}
	oidc := func(path string) (web.Gate, error) {
		return web.SignedBy(c.Invoker, signin.IDTokenOptions{Audience: c.PublicURL + path, Now: now})
	}
	if tasks, err = oidc(TasksPath); err != nil {
		return nil, nil, nil, err
	}
	return tasks, oidc, cloudtasks.HTTP{URL: c.PublicURL + TasksPath, ServiceAccount: c.Invoker}, nil
}

// ownHosts are the host names by which the service itself is
// called, where they are known: a url_fetch job must not reach the
// service's API through its front end either. That is --public-url's host
// on Cloud Run, and the project's appspot.com names on App Engine (a custom
// domain mapped to the service is the operator's to add to --url-deny).
func (c *Cloud) ownHosts() []string {
	var own []string
	if u, err := url.Parse(c.PublicURL); err == nil && u.Hostname() != "" {
		own = append(own, u.Hostname())
	}
	// A domain-scoped project (example.com:app) has no such name.
	if c.Platform == "appengine" && c.Project != "" && !strings.Contains(c.Project, ":") {
		own = append(own, c.Project+".appspot.com", "*."+c.Project+".appspot.com")
	}
	return own
}

// cloudConfig is the engine's configuration in the cloud shape: Cloud
// Tasks may deliver a StartInvocation again while the instance that took
// it first is still on its way to the target, so the default grace before
// asking the target stands.
func cloudConfig(s *Settings) statemachine.Config {
	c := statemachine.DefaultConfig
	c.TaskGrace = s.TaskGrace
	c.MinPoll, c.MaxPoll = s.PollMin, s.PollMax
	return c
}

// openCloud opens the cloud shape: Cloud Datastore and Cloud Tasks, with
// nothing running in the background, so any number of instances can
// serve. Tasks arrive at TasksPath; the watchdog pass and the config
// refresh run when App Engine cron or Cloud Scheduler calls their
// endpoints.
func openCloud(ctx context.Context, s *Settings, env environment) (*backends, error) {
	c := s.Cloud
	taskGate, cronGate, taskTarget, err := c.gates(env.now)
	if err != nil {
		return nil, err
	}
	// The client finds the Datastore emulator by DATASTORE_EMULATOR_HOST.
	dsClient, err := gcds.NewClient(ctx, c.Project)
	if err != nil {
		return nil, fmt.Errorf("datastore: %w", err)
	}
	st := datastore.New(dsClient, datastore.Options{Namespace: c.Namespace})
	tasksClient, err := gcloudtasks.NewClient(ctx, standin.ClientOptions(c.TasksEndpoint)...)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("cloud tasks: %w", err)
	}
	queue, err := cloudtasks.New(tasksClient, cloudtasks.Options{Queue: c.QueueName(), Target: taskTarget, Now: env.now})
	if err != nil {
		tasksClient.Close()
		st.Close()
		return nil, err
	}
	return &backends{
		store:  st,
		queue:  queue,
		config: cloudConfig(s),
		// Cloud Tasks cannot count a queue's tasks cheaply: no backlog
		// gauge.
		routes: func(mux *http.ServeMux, p parts) error {
			mux.Handle(TasksPath, &web.TaskEndpoint{Gate: taskGate, Decode: cloudtasks.Decode, Handler: p.eng.HandleTask, Logger: env.logger})
			return cronRoutes(mux, cronGate, p, st, env.logger)
		},
		ownHosts: c.ownHosts(),
		// Every instance shares the list in Datastore: a sign-out on one
		// instance must end the session on all.
		revocations: func() (signin.Revocations, error) { return signin.NewDatastore(dsClient, c.Namespace), nil },
		logAttrs:    []any{"platform", c.Platform, "project", c.Project, "queue", c.QueueName()},
		// Requests under way are tasks running their launches: they get
		// the stop grace, and what they cannot finish Cloud Tasks
		// delivers again.
		shutdownGrace: s.StopGrace,
		close: func() {
			tasksClient.Close()
			st.Close()
		},
	}, nil
}

// cronRoutes serve the minute cron's endpoints: the watchdog's pass with
// retention after it, and the config refresh.
func cronRoutes(mux *http.ServeMux, cronGate func(path string) (web.Gate, error), p parts, st *datastore.Store, logger *slog.Logger) error {
	for path, pass := range map[string]func(context.Context) (any, error){
		// Retention runs after the repairs, in the same minute cron: a
		// pass is bounded, and what it leaves the next minute's takes.
		// The expiry migration goes first, so that records it gives
		// their Expiry are ones retention can find.
		WatchdogPath: func(ctx context.Context) (any, error) {
			repairs, err := p.wd.Pass(ctx)
			if err != nil {
				return nil, err
			}
			migration := migrateExpiry(ctx, st, logger)
			deleted, err := p.retainer.Pass(ctx)
			if err != nil {
				return nil, err
			}
			listing := migrateListing(ctx, st, logger)
			// The watchdog's fields stay at the top, as callers read them.
			return struct {
				watchdog.Result
				Retention        retention.Result    `json:"retention"`
				ExpiryMigration  datastore.Migration `json:"expiry_migration"`
				ListingMigration datastore.Migration `json:"listing_migration"`
			}{repairs, deleted, migration, listing}, nil
		},
		RefreshPath: func(ctx context.Context) (any, error) {
			if err := p.configs.Refresh(ctx); err != nil {
				return nil, err
			}
			return p.configs.Status(ctx)
		},
	} {
		gate, err := cronGate(path)
		if err != nil {
			return err
		}
		mux.Handle(path, web.Guard(gate, logger, web.CronEndpoint(path, pass, logger)))
	}
	return nil
}

// expiryMigrationBudget bounds the invocation keys each of one minute
// cron's migrations (expiry, listing) looks at: at most this many index
// entries, and as many lookups and writes, in a call that stays well
// within a cron request's deadline. 2,000 a minute migrate nearly three
// million records a day.
const expiryMigrationBudget = 2000

// migrateExpiry runs a step of the migration that lets retention find
// records written before it existed (datastore.Store.MigrateExpiry) and logs
// its progress. A failed step is logged and retried by the next cron: it
// must not keep retention from deleting the records it can find.
func migrateExpiry(ctx context.Context, st *datastore.Store, logger *slog.Logger) datastore.Migration {
	res, err := st.MigrateExpiry(ctx, expiryMigrationBudget)
	switch {
	case err != nil:
		logger.Warn("retention: expiry migration", "err", err, "migrated", res.Migrated, "total", res.Total)
	case res.Finished:
		logger.Info("retention: expiry migration finished: every record written before retention can be deleted", "total", res.Total)
	case res.Migrated > 0:
		logger.Info("retention: expiry migration", "scanned", res.Scanned, "migrated", res.Migrated, "total", res.Total)
	}
	return res
}

// migrateListing runs a step of the migration that lets the listing of a
// project's invocations find records written before it existed
// (datastore.Store.MigrateListing), with the expiry migration's budget,
// and logs its progress. A failed step is logged and retried by the next
// cron.
func migrateListing(ctx context.Context, st *datastore.Store, logger *slog.Logger) datastore.Migration {
	res, err := st.MigrateListing(ctx, expiryMigrationBudget)
	switch {
	case err != nil:
		logger.Warn("listing migration", "err", err, "migrated", res.Migrated, "total", res.Total)
	case res.Finished:
		logger.Info("listing migration finished: every record written before it is listed with its project", "total", res.Total)
	case res.Migrated > 0:
		logger.Info("listing migration", "scanned", res.Scanned, "migrated", res.Migrated, "total", res.Total)
	}
	return res
}
