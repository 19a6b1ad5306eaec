package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	gcloudtasks "cloud.google.com/go/cloudtasks/apiv2"
	gcds "cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/internal/standin"
	"github.com/sundial-cron/sundial/retention"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/datastore"
	"github.com/sundial-cron/sundial/targets/urlfetch"
	"github.com/sundial-cron/sundial/task/cloudtasks"
	"github.com/sundial-cron/sundial/watchdog"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// The cloud shape's internal endpoints: where Cloud Tasks delivers tasks,
// and where App Engine cron (cron.yaml) or Cloud Scheduler calls the
// once-a-minute passes.
const (
	tasksPath    = "/internal/tasks"
	watchdogPath = "/internal/cron/watchdog"
	refreshPath  = "/internal/cron/refresh"
)

// cloudFlags are the cloud shape's settings. Each defaults to the
// environment App Engine or Cloud Run gives the instance (docs/deploy.md),
// so a deployment passes only --backend=cloud.
type cloudFlags struct {
	project   string // the Google Cloud project of Datastore and Cloud Tasks
	platform  string // appengine or cloudrun: who may call the internal endpoints
	queue     string // the Cloud Tasks queue's short name
	location  string // the queue's region
	publicURL string // cloudrun: the service's URL, which tasks and tokens are for
	invoker   string // cloudrun: the account Cloud Tasks and Cloud Scheduler sign as
	namespace string // the Datastore namespace
	// tasksEndpoint is a Cloud Tasks stand-in to talk to in plain text,
	// without credentials: for running the cloud shape on one machine.
	tasksEndpoint string
}

func (c *cloudFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.project, "project", os.Getenv("GOOGLE_CLOUD_PROJECT"), "cloud: the Google Cloud project (default $GOOGLE_CLOUD_PROJECT)")
	fs.StringVar(&c.platform, "platform", defaultPlatform(), "cloud: appengine or cloudrun (default: the one the environment says)")
	fs.StringVar(&c.queue, "tasks-queue", envOr("SUNDIAL_TASKS_QUEUE", "sundial-tasks"), "cloud: the Cloud Tasks queue (default $SUNDIAL_TASKS_QUEUE)")
	fs.StringVar(&c.location, "tasks-location", os.Getenv("SUNDIAL_TASKS_LOCATION"), "cloud: the queue's region (default $SUNDIAL_TASKS_LOCATION)")
	fs.StringVar(&c.publicURL, "public-url", os.Getenv("SUNDIAL_URL"), "the server's URL as callers reach it (default $SUNDIAL_URL): the base of the sign-in callback; cloudrun: what tasks and tokens are for")
	fs.StringVar(&c.invoker, "invoker", os.Getenv("SUNDIAL_INVOKER"), "cloud, cloudrun: the service account Cloud Tasks and Cloud Scheduler sign as (default $SUNDIAL_INVOKER)")
	fs.StringVar(&c.namespace, "namespace", os.Getenv("SUNDIAL_NAMESPACE"), "cloud: the Datastore namespace (default $SUNDIAL_NAMESPACE)")
	fs.StringVar(&c.tasksEndpoint, "tasks-endpoint", "", "cloud: host:port of a Cloud Tasks stand-in, spoken to without TLS or credentials (local runs only)")
}

// resolve checks the settings the cloud shape needs.
func (c *cloudFlags) resolve() error {
	var missing []string
	for _, req := range []struct{ name, value string }{
		{"--project", c.project}, {"--tasks-queue", c.queue}, {"--tasks-location", c.location},
	} {
		if req.value == "" {
			missing = append(missing, req.name)
		}
	}
	switch c.platform {
	case "appengine":
	case "cloudrun":
		if c.publicURL == "" {
			missing = append(missing, "--public-url")
		}
		if c.invoker == "" {
			missing = append(missing, "--invoker")
		}
		c.publicURL = strings.TrimSuffix(c.publicURL, "/")
	case "":
		return errors.New("--platform: the environment is neither App Engine nor Cloud Run; say appengine or cloudrun")
	default:
		return fmt.Errorf("--platform %q: want appengine or cloudrun", c.platform)
	}
	if len(missing) > 0 {
		return fmt.Errorf("--backend=cloud needs %s", strings.Join(missing, ", "))
	}
	return nil
}

// defaultPlatform is the platform the environment says this runs on.
func defaultPlatform() string {
	switch {
	case os.Getenv("GAE_ENV") != "":
		return "appengine"
	case os.Getenv("K_SERVICE") != "":
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
func (c *cloudFlags) offPlatform(getenv func(string) string) string {
	var want []string
	var risk string
	switch c.platform {
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
	return fmt.Sprintf("--platform=%s, but this is not %s: %s not set; %s", c.platform, platformNames[c.platform], strings.Join(missing, ", "), risk)
}

var platformNames = map[string]string{"appengine": "App Engine", "cloudrun": "Cloud Run"}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// queueName is the queue's full resource name.
func (c *cloudFlags) queueName() string {
	return fmt.Sprintf("projects/%s/locations/%s/queues/%s", c.project, c.location, c.queue)
}

// gates returns who may call the task endpoint and the cron endpoints, and
// where Cloud Tasks delivers tasks. On App Engine the platform strips the
// X-AppEngine-* and X-CloudTasks-* headers from outside requests, so their
// presence is proof; on Cloud Run any header can come from outside, so each
// request must carry a token Google signed for the invoker account.
func (c *cloudFlags) gates(now func() time.Time) (tasks web.Gate, cron func(path string) (web.Gate, error), target cloudtasks.Destination, err error) {
	if c.platform == "appengine" {
		cronGate := web.AppEngineCron()
		return web.AppEngineQueue(c.queue),
			func(string) (web.Gate, error) { return cronGate, nil },
			cloudtasks.AppEngine{Service: os.Getenv("GAE_SERVICE"), Path: tasksPath}, nil
	}
	oidc := func(path string) (web.Gate, error) {
		return web.SignedBy(c.invoker, signin.IDTokenOptions{Audience: c.publicURL + path, Now: now})
	}
	if tasks, err = oidc(tasksPath); err != nil {
		return nil, nil, nil, err
	}
	return tasks, oidc, cloudtasks.HTTP{URL: c.publicURL + tasksPath, ServiceAccount: c.invoker}, nil
}

// ownHosts adds to deny the host names by which the service itself is
// called, where they are known: a url_fetch job must not reach the
// service's API through its front end either. That is --public-url's host
// on Cloud Run, and the project's appspot.com names on App Engine (a custom
// domain mapped to the service is the operator's to add to --url-deny).
func (c *cloudFlags) ownHosts(deny []string) []string {
	deny = slices.Clone(deny)
	if u, err := url.Parse(c.publicURL); err == nil && u.Hostname() != "" {
		deny = append(deny, u.Hostname())
	}
	// A domain-scoped project (example.com:app) has no such name.
	if c.platform == "appengine" && c.project != "" && !strings.Contains(c.project, ":") {
		deny = append(deny, c.project+".appspot.com", "*."+c.project+".appspot.com")
	}
	return deny
}

// cloudConfig is the engine's configuration in the cloud shape: Cloud
// Tasks may deliver a StartInvocation again while the instance that took
// it first is still on its way to the target, so the default grace before
// asking the target stands.
func cloudConfig(f serveFlags) statemachine.Config {
	c := statemachine.DefaultConfig
	c.TaskGrace = f.taskGrace
	c.MinPoll, c.MaxPoll = f.pollMin, f.pollMax
	return c
}

// serveCloud runs the cloud shape until ctx is done: an HTTP server over
// Cloud Datastore and Cloud Tasks that does work only when called. Tasks
// arrive at tasksPath; the watchdog pass and the config refresh run when
// App Engine cron or Cloud Scheduler calls their endpoints; nothing runs
// in the background, so any number of instances can serve.
func serveCloud(ctx context.Context, f serveFlags, logger *slog.Logger, now func() time.Time) error {
	c := f.cloud
	self := &urlfetch.Listeners{}
	tgts, err := newTargets(targetOptions{
		policy: urlfetch.Policy{Allow: f.urlAllow, Deny: c.ownHosts(f.urlDeny)}, server: self, pubsubGrants: f.pubsubGrants,
		swarmingGrants: f.swarmingGrants, swarmingTopic: f.swarmingTopic, swarmingServers: f.swarmingServers, pushSecret: f.pushSecret,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := closeTargets(tgts); err != nil {
			logger.Warn("closing the targets", "err", err)
		}
	}()
	taskGate, cronGate, taskTarget, err := c.gates(now)
	if err != nil {
		return err
	}
	// The client finds the Datastore emulator by DATASTORE_EMULATOR_HOST.
	dsClient, err := gcds.NewClient(ctx, c.project)
	if err != nil {
		return fmt.Errorf("datastore: %w", err)
	}
	st := datastore.New(dsClient, datastore.Options{Namespace: c.namespace})
	defer st.Close()
	tasksClient, err := gcloudtasks.NewClient(ctx, standin.ClientOptions(c.tasksEndpoint)...)
	if err != nil {
		return fmt.Errorf("cloud tasks: %w", err)
	}
	defer tasksClient.Close()
	queue, err := cloudtasks.New(tasksClient, cloudtasks.Options{Queue: c.queueName(), Target: taskTarget, Now: now})
	if err != nil {
		return err
	}

	// Cloud Tasks cannot count a queue's tasks cheaply: no backlog gauge.
	metrics := web.NewMetrics(nil)
	notifier, err := webhooks(urlfetch.Policy{Allow: f.urlAllow, Deny: c.ownHosts(f.urlDeny)}, self, now, metrics.Notified)
	if err != nil {
		return err
	}
	p := assemble(f, st, queue, tgts, notifier, cloudConfig(f), metrics, logger, now, ticks{})

	mux := http.NewServeMux()
	mux.Handle(tasksPath, &web.TaskEndpoint{Gate: taskGate, Decode: cloudtasks.Decode, Handler: p.eng.HandleTask, Logger: logger})
	for path, pass := range map[string]func(context.Context) (any, error){
		// Retention runs after the repairs, in the same minute cron: a
		// pass is bounded, and what it leaves the next minute's takes.
		// The expiry migration goes first, so that records it gives
		// their Expiry are ones retention can find.
		watchdogPath: func(ctx context.Context) (any, error) {
			repairs, err := p.wd.Pass(ctx)
			if err != nil {
				return nil, err
			}
			migration := migrateExpiry(ctx, st, logger)
			deleted, err := p.retainer.Pass(ctx)
			if err != nil {
				return nil, err
			}
			// The watchdog's fields stay at the top, as callers read them.
			return struct {
				watchdog.Result
				Retention       retention.Result          `json:"retention"`
				ExpiryMigration datastore.ExpiryMigration `json:"expiry_migration"`
			}{repairs, deleted, migration}, nil
		},
		refreshPath: func(ctx context.Context) (any, error) {
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
	api, err := p.withPush(f, logger, now, f.auth.Mount(p.api()))
	if err != nil {
		return err
	}
	mux.Handle("/", api)

	// web.New's own check comes after this mux, which would redirect first.
	ln, srv, err := listen(f, web.Canonical(mux))
	if err != nil {
		return err
	}
	if err := self.Add(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	logger.Info("listening", "addr", ln.Addr().String(), "backend", "cloud", "platform", c.platform,
		"project", c.project, "queue", c.queueName(), "config_dir", f.configDir)
	// Requests under way are tasks running their launches: they get the
	// stop grace, and what they cannot finish Cloud Tasks delivers again.
	return runServer(ctx, logger, ln, srv, f.stopGrace)
}

// expiryMigrationBudget bounds the invocation keys one minute cron's expiry
// migration looks at: at most this many index entries, and as many lookups
// and writes, in a call that stays well within a cron request's deadline.
// 2,000 a minute migrate nearly three million records a day.
const expiryMigrationBudget = 2000

// migrateExpiry runs a step of the migration that lets retention find
// records written before it existed (datastore.Store.MigrateExpiry) and logs
// its progress. A failed step is logged and retried by the next cron: it
// must not keep retention from deleting the records it can find.
func migrateExpiry(ctx context.Context, st *datastore.Store, logger *slog.Logger) datastore.ExpiryMigration {
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
