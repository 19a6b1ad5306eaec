// Package web is Sundial's HTTP surface: the JSON API under /api/v1 and
// the Prometheus metrics at /metrics, over the engine and the store
// (New); the internal endpoints Cloud Tasks and the platform's cron call in
// the cloud shape, with the gates that admit only them (TaskEndpoint,
// CronEndpoint, Gate); and the web console's pages at / (Options.Console,
// package web/console) behind the API's authenticators and roles. The
// server command mounts them; docs/api.md documents every API route,
// docs/console.md the console.
//
// Reads go to the store outside any transaction and may be slightly stale;
// every change goes through the engine, which applies it in one transaction
// on the job, so a request the state machine refuses changes nothing.
package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/web/signin"
)

// Options configure the handler.
type Options struct {
	Engine *engine.Engine
	Store  store.Store
	// Metrics, if set, is served at /metrics.
	Metrics *Metrics
	// Authenticators tell who makes each request, asked in order as
	// signin.Chain says; a server's come from signin.New. None leaves
	// every caller anonymous.
	Authenticators signin.Chain
	// Roles decide what each identity may do (the server's
	// administrators and groups; the projects' grants come from the
	// store). Required.
	Roles *access.Roles
	// Now is the clock the grants cache expires by; nil reads every
	// project's grants from the store at every request.
	Now func() time.Time
	// GrantsTTL is how long a project's grants are answered from the
	// cache: the bound on how long a revoked grant still works on an
	// instance. 0 means DefaultGrantsTTL.
	GrantsTTL time.Duration
	// Logger receives failures the caller sees only as a 500; nil
	// discards them.
	Logger *slog.Logger
	// Reimport, if set, imports the config repos at once, for POST
	// /api/v1/configs:reimport; WebhookSecret is the secret a webhook's
	// signature proves it holds (none: only administrators may call it).
	Reimport      func(context.Context) (Refused, error)
	WebhookSecret []byte
	// Console serves the web console's pages at / (package
	// web/console), behind the API's authenticators and roles; it needs
	// Now. Off, every path outside the API is a JSON 404.
	Console bool
	// Instances, if set, lists the instances serving from the store,
	// for GET /api/v1/instances: a shape of many instances on one
	// database. Unset, that route answers 404.
	Instances func(context.Context) ([]Instance, error)
	// SignIn is the path that signs a person in with OpenID Connect,
	// linked from the console's pages for a signed-out viewer; "" when
	// there is none. The console learns the other ways in (a token
	// sign-in, IAP, the single-user mode) from Authenticators
	// (signin.Chain.Entry).
	SignIn string
}

// server holds what the handlers share.
type server struct {
	eng    *engine.Engine
	st     store.Store
	log    *slog.Logger
	authn  signin.Chain
	roles  *access.Roles
	grants *grantsCache
	// csrf refuses browsers' cross-origin changes.
	csrf *http.CrossOriginProtection

	reimportFn    func(context.Context) (Refused, error)
	webhookSecret []byte
	instancesFn   func(context.Context) ([]Instance, error)
}

// New returns the handler of /api/v1/..., /healthz, /readyz and, with
// Options.Metrics, /metrics.
func New(opts Options) http.Handler {
	if opts.Engine == nil || opts.Store == nil || opts.Roles == nil {
		panic("web: Options.Engine, Options.Store and Options.Roles are required")
	}
	if opts.GrantsTTL <= 0 {
		opts.GrantsTTL = DefaultGrantsTTL
	}
	s := &server{
		eng: opts.Engine, st: opts.Store, log: opts.Logger,
		authn: opts.Authenticators, roles: opts.Roles, csrf: http.NewCrossOriginProtection(),
		grants:     &grantsCache{eng: opts.Engine, now: opts.Now, ttl: opts.GrantsTTL},
		reimportFn: opts.Reimport, webhookSecret: opts.WebhookSecret, instancesFn: opts.Instances,
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
	mux.Handle("POST "+reimportPath, s.api(s.reimport))
	mux.Handle(reimportPath, s.methodNotAllowed([]string{"POST"}))
	noRoute := s.api(func(r *http.Request) (int, any, error) {
		return 0, nil, notFound("no such API route: %s", r.URL.Path)
	})
	// The subtree's root too, or the mux would redirect it to prefix+"/".
	mux.Handle(prefix, noRoute)
	mux.Handle(prefix+"/", noRoute)
	if opts.Metrics != nil {
		mux.Handle("GET /metrics", opts.Metrics.Handler())
		mux.Handle("/metrics", s.methodNotAllowed([]string{"GET", "HEAD"}))
	}
	// Liveness for load balancers and platforms' probes: it touches
	// nothing, so a slow store does not get a healthy instance restarted.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.Handle("/healthz", s.methodNotAllowed([]string{"GET", "HEAD"}))
	// Readiness: whether this instance may take traffic, which it cannot
	// do usefully while its store does not answer.
	mux.HandleFunc("GET /readyz", s.ready)
	mux.Handle("/readyz", s.methodNotAllowed([]string{"GET", "HEAD"}))
	if opts.Console {
		mux.Handle("/", s.console(opts))
	} else {
		// Without the console everything else is the API's JSON 404: a
		// client of this server reads JSON errors, and the mux's
		// text/plain ones would be the only exception.
		mux.Handle("/", s.api(func(r *http.Request) (int, any, error) {
			return 0, nil, notFound("no such path: %s", r.URL.Path)
		}))
	}
	return Canonical(mux)
}

// Canonical answers a request whose path is not in canonical form (an
// empty, "." or ".." segment: "//", "/./", "/../", also percent-encoded)
// with a JSON 404, and passes the others to h. http.ServeMux would answer
// it with a redirect to the cleaned path, which clients follow, a POST
// becoming a request for another resource than the one named; and a
// proxy or log that matched the path as sent saw another one. Sundial's
// paths are canonical, so such a path names nothing.
func Canonical(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		clean := path.Clean(p)
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		if p != clean {
			writeJSON(w, nil, http.StatusNotFound, map[string]string{"error": fmt.Sprintf(
				"no such path: %q is not canonical (it has an empty, . or .. segment); paths are not cleaned or redirected", p)})
			return
		}
		h.ServeHTTP(w, r)
	})
}
