// Package console is Sundial's web console: server-rendered pages of the
// projects, their jobs, a job's schedule and history, an invocation's log,
// the config status and a schedule playground, with the buttons that steer
// a job. It reads what the JSON API reads and changes jobs through the
// same engine calls, under the same identity and roles: package web
// mounts it behind its gate (Gate), so a page never shows a project or job
// its viewer may not read, and offers only what the viewer may do.
//
// Pages are html/template, so everything a config, a person or a job's
// log wrote is escaped; pictures are SVG drawn here; the one stylesheet and
// the one script are embedded. The script only adds comfort (local times,
// confirmations, a quiet refresh); every page reads without it.
package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/web/signin"
)

// Gate is how the console learns who makes a request and what a project
// grants: the JSON API's own authenticators and grants cache, so both
// answer alike.
type Gate interface {
	// Identify returns the identity the request's credentials prove,
	// access.Anonymous for none, or an error for credentials that fail.
	Identify(r *http.Request) (access.Identity, error)
	// Grants returns a project's grants.
	Grants(ctx context.Context, project string) ([]access.RoleGrant, error)
}

// Options configure the console.
type Options struct {
	Engine *engine.Engine
	Store  store.Store
	Roles  *access.Roles
	Gate   Gate
	// Now is the clock "in 3 min" and the timelines are drawn by.
	Now func() time.Time
	// Entry is how a person gets in: the sign-ins a signed-out viewer is
	// offered, the sign-out a signed-in one, and what a refused page
	// says.
	Entry signin.Entry
	// Logger receives failures the viewer sees only as an error page.
	Logger *slog.Logger
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// console holds what the pages share.
type console struct {
	Options
	pages map[string]*template.Template
	csrf  *http.CrossOriginProtection
}

// New returns the console's handler. It serves every path it knows and
// answers the others with its own 404 page.
func New(opts Options) http.Handler {
	if opts.Engine == nil || opts.Store == nil || opts.Roles == nil || opts.Gate == nil || opts.Now == nil {
		panic("console: Options.Engine, Store, Roles, Gate and Now are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &console{Options: opts, pages: parsePages(), csrf: http.NewCrossOriginProtection()}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticFiles(http.FileServerFS(static))))
	mux.Handle("GET /{$}", c.page(c.projects))
	mux.Handle("GET /fleet", c.page(c.fleet))
	mux.Handle("GET /configs", c.page(c.configs))
	mux.Handle("GET /configs/{project}/changes", c.page(c.configChanges))
	mux.Handle("GET /forecast", c.page(c.loadForecast))
	mux.Handle("GET /playground", c.page(c.playground))
	mux.Handle("GET /projects/{project}", c.page(c.jobs))
	mux.Handle("GET /projects/{project}/grid", c.page(c.grid))
	mux.Handle("GET /projects/{project}/objectives", c.page(c.objectivesOf))
	mux.Handle("POST /projects/{project}/pause", c.page(c.bulk(true)))
	mux.Handle("POST /projects/{project}/resume", c.page(c.bulk(false)))
	mux.Handle("GET "+jobPath, c.page(c.job))
	mux.Handle("GET "+jobPath+"/invocations/{invocation}", c.page(c.invocation))
	mux.Handle("GET "+jobPath+"/invocations/{invocation}/log", c.page(c.logFile))
	for _, a := range actions {
		mux.Handle("POST "+jobPath+"/"+a.name, c.page(c.act(a)))
	}
	mux.Handle("/", c.page(func(w http.ResponseWriter, r *http.Request, v viewer) error {
		return notFound("no page at %s", r.URL.Path)
	}))
	return mux
}

const jobPath = "/projects/{project}/jobs/{job}"

// staticFiles serves the embedded assets, and no listing of them, marked
// as cacheable for a short while: a new release changes them under the
// same names.
func staticFiles(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// contentSecurityPolicy lets a page load only the console's own script and
// stylesheet: no inline script, no style attribute, no other origin, no
// framing. An injected tag that escaping missed would still not run.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// viewer is who looks at a page.
type viewer struct {
	ID access.Identity
}

// handler is one page: it writes the page, or returns an error that
// c.page turns into an error page.
type handler func(w http.ResponseWriter, r *http.Request, v viewer) error

// page wraps a handler with what every page needs: the security headers,
// the cross-origin check on every form post, and the viewer's identity.
func (c *console) page(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Content-Security-Policy", contentSecurityPolicy)
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Referrer-Policy", "same-origin")
		hdr.Set("Cache-Control", "no-store")
		var err error
		var v viewer
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			// A page of another site must not steer jobs with the rights
			// of whoever is signed in here, or of a local caller.
			if cerr := c.csrf.Check(r); cerr != nil {
				err = &pageError{status: http.StatusForbidden, msg: "cross-origin request refused: " + cerr.Error()}
			}
		}
		if err == nil {
			v.ID, err = c.Gate.Identify(r)
			if err != nil {
				err = &pageError{status: http.StatusUnauthorized, msg: "your credentials were refused: " + err.Error()}
			}
		}
		if err == nil {
			err = h(w, r, v)
		}
		if err != nil {
			c.fail(w, r, v, err)
		}
	})
}

// pageError is an error a page shows to its viewer with a status.
type pageError struct {
	status int
	msg    string
}

func (e *pageError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &pageError{status: http.StatusNotFound, msg: sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &pageError{status: http.StatusBadRequest, msg: sprintf(format, args...)}
}

// fail renders the error page. A viewer who is signed out and was refused
// is told how to get in on this server: what they asked for may exist for
// someone else.
func (c *console) fail(w http.ResponseWriter, r *http.Request, v viewer, err error) {
	var pe *pageError
	if !errors.As(err, &pe) {
		c.Logger.Error("console page failed", "path", r.URL.Path, "identity", string(v.ID), "error", err)
		pe = &pageError{status: http.StatusInternalServerError, msg: "the server failed to build this page; its log says why"}
	}
	if (pe.status == http.StatusNotFound || pe.status == http.StatusForbidden) && v.ID == access.Anonymous {
		pe = &pageError{status: http.StatusUnauthorized, msg: signedOut(c.Entry)}
	}
	page := errorPage{Status: pe.status, StatusText: http.StatusText(pe.status), Message: pe.msg}
	if pe.status == http.StatusUnauthorized {
		page.SignIn, _ = c.doors(r, viewer{ID: access.Anonymous})
	}
	c.render(w, r, v, pe.status, "error", page)
}

// signedOut says to a signed-out viewer refused a page how to get in on
// this server, and only what is true of it.
func signedOut(e signin.Entry) string {
	const maybe = "signed out, you may not see this page, or it does not exist"
	switch {
	case e.OIDC != "" && e.Token != "":
		return "sign in, with your account or with a token, to see this page: " + maybe
	case e.OIDC != "":
		return "sign in to see this page: " + maybe
	case e.Token != "":
		return "sign in with a token to see this page: " + maybe
	case e.IAP:
		return maybe + "; this server signs people in through Identity-Aware Proxy: open it at the address the proxy guards"
	case e.Local:
		return maybe + "; this server runs in the single-user mode: open the console in a browser on the server's own machine, run by the server's user"
	case e.Bearer:
		return maybe + "; this server signs no one in through the browser (its API takes bearer tokens, as the sundial CLI sends them): ask its operator"
	}
	return maybe + "; this server signs no one in: ask its operator"
}

type errorPage struct {
	Status     int
	StatusText string
	Message    string
	SignIn     []crumb // the ways in, on a 401
}

// checkQuery refuses a query parameter the page does not take, or one
// given twice: a mistyped filter must not silently show everything.
func checkQuery(r *http.Request, allowed ...string) error {
	for k, v := range r.URL.Query() {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return badRequest("unknown query parameter %q: this page takes none", k)
			}
			return badRequest("unknown query parameter %q: this page takes %s", k, strings.Join(allowed, ", "))
		}
		if len(v) > 1 {
			return badRequest("query parameter %q is given %d times", k, len(v))
		}
	}
	return nil
}
