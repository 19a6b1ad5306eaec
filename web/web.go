// Package web is Sundial's HTTP surface: the JSON API under /api/v1 and
// the Prometheus metrics at /metrics, over the engine and the store
// (New); the internal endpoints Cloud Tasks and the platform's cron call in
// the cloud shape, with the gates that admit only them (TaskEndpoint,
// CronEndpoint, Gate); and, as they come, the console and sign-in. The
// server command mounts them; docs/api.md documents every route.
//
// Reads go to the store outside any transaction and may be slightly stale;
// every change goes through the engine, which applies it in one transaction
// on the job, so a request the state machine refuses changes nothing.
package web

import (
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
)

// Configs reports how each project's config was last loaded; the config
// package's refresher is meant to satisfy it, so it uses no type of ours.
type Configs interface {
	// ConfigProjects lists the projects the config source knows, whether
	// their config is valid or not.
	ConfigProjects() []string
	// ConfigStatus returns the revision a project runs, when it was loaded,
	// and the error of its latest revision if that one was refused ("" if
	// not); ok is false for a project the config source does not know.
	ConfigStatus(project string) (revision string, loadedAt time.Time, lastErr string, ok bool)
}

// Options configure the handler.
type Options struct {
	Engine *engine.Engine
	Store  store.Store
	// Configs gives the projects' config status; nil shows none.
	Configs Configs
	// Metrics, if set, is served at /metrics.
	Metrics *Metrics
	// AdminToken is the bearer token that makes a caller the admin; ""
	// refuses every caller that is not local.
	AdminToken string
	// LoopbackAdmin makes a local caller (connected from loopback, to a
	// loopback host name, with no forwarding header) the admin without a
	// token: the embedded shape. Leave it off wherever a proxy or platform
	// connects from loopback on behalf of others and does not say so in a
	// forwarding header.
	LoopbackAdmin bool
	// Logger receives failures the caller sees only as a 500; nil
	// discards them.
	Logger *slog.Logger
}

// server holds what the handlers share.
type server struct {
	eng     *engine.Engine
	st      store.Store
	configs Configs
	log     *slog.Logger
	auth    *auth
}

// New returns the handler of /api/v1/..., /healthz and, with
// Options.Metrics, /metrics.
func New(opts Options) http.Handler {
	if opts.Engine == nil || opts.Store == nil {
		panic("app: Options.Engine and Options.Store are required")
	}
	s := &server{
		eng: opts.Engine, st: opts.Store, configs: opts.Configs, log: opts.Logger,
		auth: newAuth(opts.AdminToken, opts.LoopbackAdmin),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.Handle(r.method+" "+r.path, s.guard(r))
	}
	for path, methods := range allowed(s.routes()) {
		// A pattern without a method is less specific than the ones with
		// one, so it catches exactly the methods no route takes, and the
		// answer is JSON like every other error.
		mux.Handle(path, s.methodNotAllowed(methods))
	}
	mux.Handle(prefix+"/", s.api(func(r *http.Request) (int, any, error) {
		return 0, nil, notFound("no such API route: %s", r.URL.Path)
	}))
	if opts.Metrics != nil {
		mux.Handle("GET /metrics", opts.Metrics.Handler())
	}
	// Liveness for load balancers and platforms' probes: it touches
	// nothing, so a slow store does not get a healthy instance restarted.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	return mux
}
