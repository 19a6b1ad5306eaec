package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web/signin"
	"github.com/sundial-cron/sundial/web/signin/signintest"
)

// parseSignin parses serve's sign-in flags for the embedded shape and
// builds them.
func parseSignin(t *testing.T, publicURL string, args ...string) (signin.Setup, error) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := serveFlags{backend: "embedded"}
	registerSignin(fs, &f.signin)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	f.cloud.publicURL = publicURL
	now := func() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) }
	return buildSignin(context.Background(), f, now, slog.New(slog.DiscardHandler))
}

func TestServeSigninFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile, tokensFile, secretFile := filepath.Join(dir, "keys"), filepath.Join(dir, "tokens"), filepath.Join(dir, "secret")
	token, line := signin.NewToken(access.ServiceAccount("ci@proj.iam.gserviceaccount.com"))
	for path, content := range map[string]string{keyFile: signin.NewKey() + "\n", tokensFile: line + "\n", secretFile: "s3cret\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	public := "http://127.0.0.1:8080"
	is := signintest.New(signintest.Options{ClientID: "c", ClientSecret: "s3cret", RedirectURL: public + signin.CallbackPath, Now: time.Now})
	t.Cleanup(is.Close)
	oidc := []string{"--oidc-issuer", is.URL(), "--oidc-client-id", "c", "--oidc-client-secret-file", secretFile, "--cookie-key-file", keyFile, "--insecure-dev-cookies"}

	none, err := parseSignin(t, "")
	if err != nil || !none.SingleUser() || len(none.Chain()) != 1 || none.SignInPath() != "" {
		t.Errorf("no sign-in flags: %+v, %v; want the single-user mode alone", none, err)
	}
	all, err := parseSignin(t, public, append(oidc, "--iap-audience", "/projects/1/apps/a",
		"--id-token-audience", "https://sundial.example.com", "--static-tokens-file", tokensFile)...)
	if err != nil || all.SingleUser() || len(all.Chain()) != 4 || all.SignInPath() != signin.SignInPath {
		t.Fatalf("every sign-in flag: %d authenticators, single user %t, sign-in at %q, %v; want 4, no single user, %s",
			len(all.Chain()), all.SingleUser(), all.SignInPath(), err, signin.SignInPath)
	}
	// The static tokens file is read, and the
	// sign-in flow is mounted beside the API.
	r := httptest.NewRequest("GET", "/api/v1/whoami", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	if id, err := all.Chain().Authenticate(r); err != nil || id != access.ServiceAccount("ci@proj.iam.gserviceaccount.com") {
		t.Errorf("the static token = %q, %v", id, err)
	}
	w := httptest.NewRecorder()
	all.Mount(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", signin.SignInPath, nil))
	if w.Code != http.StatusFound || !strings.HasPrefix(w.Header().Get("Location"), is.URL()+"/authorize?") {
		t.Errorf("GET %s: %d to %q; want a redirect to the issuer", signin.SignInPath, w.Code, w.Header().Get("Location"))
	}

	for _, tt := range []struct {
		name   string
		public string
		args   []string
		want   string
	}{
		{"oidc without a public URL", "", oidc, "needs --public-url"},
		{"oidc without a key file", public, []string{"--oidc-issuer", is.URL(), "--oidc-client-id", "c"}, "--cookie-key-file"},
		{"insecure cookies off localhost", "http://sundial.example.com", oidc, "only for development at http://localhost"},
		{"plain http without insecure cookies", public, oidc[:len(oidc)-1], "plain http"},
		{"a bad IAP audience", "", []string{"--iap-audience", "sundial"}, "--iap-audience"},
		{"a static tokens file with a bad line", "", []string{"--static-tokens-file", keyFile}, keyFile + ":1:"},
		{"an admin token file that is not there", "", []string{"--admin-token-file", filepath.Join(dir, "none")}, "--admin-token-file"},
	} {
		if _, err := parseSignin(t, tt.public, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
}
