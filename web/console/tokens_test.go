package console_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/html"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// tokenServer is the demo's server as `sundial serve --static-tokens-file`
// sets it up: the console behind the token sign-in, the real chain of
// authenticators and the token file's identities. restart starts it
// again with another token file, over the same cookie keys and list of
// ended sessions, as an operator revokes a token.
type tokenServer struct {
	t       *testing.T
	s       *site
	dir     string
	rev     signin.Revocations
	handler atomic.Pointer[http.Handler]
}

func newTokenServer(t *testing.T, s *site, lines ...string) *tokenServer {
	t.Helper()
	ts := &tokenServer{t: t, s: s, dir: t.TempDir(), rev: signin.NewMemory(s.now)}
	if err := os.WriteFile(filepath.Join(ts.dir, "keys"), []byte(signin.NewKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts.restart(lines...)
	return ts
}

func (ts *tokenServer) restart(lines ...string) {
	ts.t.Helper()
	tokens := filepath.Join(ts.dir, "tokens")
	if err := os.WriteFile(tokens, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		ts.t.Fatal(err)
	}
	setup, err := signin.New(ts.s.ctx, signin.Settings{StaticTokensFile: tokens, CookieKeyFile: filepath.Join(ts.dir, "keys"), LocalMode: true},
		func() (signin.Revocations, error) { return ts.rev, nil }, ts.s.now, slog.New(slog.DiscardHandler))
	if err != nil {
		ts.t.Fatal(err)
	}
	roles, err := setup.Roles(access.Settings{Administrators: []access.Member{admin}})
	if err != nil {
		ts.t.Fatal(err)
	}
	h := setup.Mount(web.New(web.Options{Engine: ts.s.eng, Store: ts.s.st, Authenticators: setup.Chain(), Roles: roles,
		Now: ts.s.now, Console: true, SignIn: setup.SignInPath()}))
	ts.handler.Store(&h)
}

func (ts *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*ts.handler.Load()).ServeHTTP(w, r)
}

// tokenSignInPage is the token sign-in page as a browser at localhost
// gets it.
func tokenSignInPage(t *testing.T, s *site) page {
	t.Helper()
	_, line := signin.NewToken(reader)
	w := httptest.NewRecorder()
	newTokenServer(t, s, line).ServeHTTP(w, httptest.NewRequest("GET", "http://localhost"+signin.TokenSignInPath+"?next=%2F", nil))
	doc, err := html.Parse(strings.NewReader(w.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	return page{status: w.Code, header: w.Header(), doc: doc, raw: w.Body.String()}
}
