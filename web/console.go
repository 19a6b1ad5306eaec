package web

import (
	"context"
	"net/http"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web/console"
	"github.com/sundial-cron/sundial/web/signin"
)

// console is the web console over the API's own gate: the same
// authenticators say who the viewer is, the same grants cache and roles
// what it may see and do.
func (s *server) console(opts Options) http.Handler {
	if opts.Now == nil {
		panic("web: Options.Console needs Options.Now")
	}
	entry := s.authn.Entry()
	if opts.SignIn != "" {
		entry.OIDC, entry.SignOut = opts.SignIn, signin.SignOutPath
	}
	return console.New(console.Options{
		Engine: s.eng, Store: s.st, Roles: s.roles, Gate: consoleGate{s}, Now: opts.Now,
		Entry: entry, Logger: s.log,
	})
}

// consoleGate is console.Gate over the server.
type consoleGate struct{ s *server }

// Identify implements console.Gate.
func (g consoleGate) Identify(r *http.Request) (access.Identity, error) {
	id, err := g.s.authenticate(r)
	if err != nil {
		g.s.log.Warn("refused a console request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", err.Error())
	}
	return id, err
}

// Grants implements console.Gate.
func (g consoleGate) Grants(ctx context.Context, project string) ([]access.RoleGrant, error) {
	return g.s.grants.get(ctx, project)
}
