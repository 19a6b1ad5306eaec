package server

import (
	"context"
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

// buildSignin builds sign-in settings as the embedded shape does.
func buildSignin(t *testing.T, publicURL string, s SignIn) (signinSetup, error) {
	t.Helper()
	now := func() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) }
	memory := func() (signin.Revocations, error) { return signin.NewMemory(now), nil }
	return s.build(context.Background(), publicURL, memory, now, slog.New(slog.DiscardHandler))
}

func TestSignInSettings(t *testing.T) {
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
	oidc := SignIn{OIDCIssuer: is.URL(), OIDCClientID: "c", OIDCSecretFile: secretFile, CookieKeyFile: keyFile, InsecureCookies: true, SessionTTL: defaultSessionTTL}

	none, err := buildSignin(t, "", SignIn{})
	if err != nil || len(none.authenticators) != 0 || none.oidc != nil {
		t.Errorf("no sign-in flags: %+v, %v; want nothing", none, err)
	}
	every := oidc
	every.IAPAudience, every.IDTokenAudience, every.StaticTokensFile = "/projects/1/apps/a", "https://sundial.example.com", tokensFile
	all, err := buildSignin(t, public, every)
	if err != nil || len(all.authenticators) != 3 || all.static == nil || all.oidc == nil {
		t.Fatalf("every sign-in flag: %d authenticators and static tokens %v, %v; want 3 and static tokens", len(all.authenticators), all.static != nil, err)
	}
	// The static tokens file is read, and the
	// sign-in flow is mounted beside the API.
	r := httptest.NewRequest("GET", "/api/v1/whoami", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	if id, err := all.static.Authenticate(r); err != nil || id != access.ServiceAccount("ci@proj.iam.gserviceaccount.com") {
		t.Errorf("the static token = %q, %v", id, err)
	}
	w := httptest.NewRecorder()
	all.mount(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", signin.SignInPath, nil))
	if w.Code != http.StatusFound || !strings.HasPrefix(w.Header().Get("Location"), is.URL()+"/authorize?") {
		t.Errorf("GET %s: %d to %q; want a redirect to the issuer", signin.SignInPath, w.Code, w.Header().Get("Location"))
	}

	for _, tt := range []struct {
		name   string
		public string
		s      SignIn
		want   string
	}{
		{"oidc without a public URL", "", oidc, "needs --public-url"},
		{"oidc without a key file", public, SignIn{OIDCIssuer: is.URL(), OIDCClientID: "c"}, "--cookie-key-file"},
		{"insecure cookies off localhost", "http://sundial.example.com", oidc, "only for development at http://localhost"},
		{"plain http without insecure cookies", public, secure(oidc), "plain http"},
		{"a bad IAP audience", "", SignIn{IAPAudience: "sundial"}, "--iap-audience"},
		{"a static tokens file with a bad line", "", SignIn{StaticTokensFile: keyFile}, keyFile + ":1:"},
	} {
		if _, err := buildSignin(t, tt.public, tt.s); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
}

// secure is s with secure cookies.
func secure(s SignIn) SignIn {
	s.InsecureCookies = false
	return s
}
