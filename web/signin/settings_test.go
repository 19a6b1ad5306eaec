package signin_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web/signin"
)

// setup builds s with an in-memory revocation list on a clock at t0.
func setup(t *testing.T, s signin.Settings) signin.Setup {
	t.Helper()
	now := func() time.Time { return t0 }
	rev := func() (signin.Revocations, error) { return signin.NewMemory(now), nil }
	got, err := signin.New(context.Background(), s, rev, now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// caller is a request to the API from this machine (loopback) or from
// elsewhere, with an optional bearer token.
// ownConnection is the server's end of a loopback connection from this
// process, which the kernel says is this process's user's: a local
// caller's requests come over it, as the operator's would.
// Its client end is kept too: a collected connection is closed.
var ownConnection = sync.OnceValue(func() net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	if ownClient, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		panic(err)
	}
	server, err := ln.Accept()
	if err != nil {
		panic(err)
	}
	return server
})

var ownClient net.Conn

func caller(local bool, token string) *http.Request {
	r := httptest.NewRequest("GET", "http://localhost/api/v1/whoami", nil)
	r.RemoteAddr = "198.51.100.2:4242"
	if local {
		r.RemoteAddr = "127.0.0.1:4242"
		r = r.WithContext(signin.ConnContext(r.Context(), ownConnection()))
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// Who gets in, as the settings say: the single-user mode only where
// LocalMode allows it and no sign-in is set (the admin token is not
// sign-in), with the roles saying the same; the admin token's bearer is
// an administrator of its own name, asked before the static tokens,
// which refuse every token they do not know.
func TestSettingsDecideWhoGetsIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const admin = "s3cret-admin-token-0123456789"
	adminFile, tokensFile := filepath.Join(dir, "admin"), filepath.Join(dir, "tokens")
	ci := access.ServiceAccount(ciAccount)
	static, line := signin.NewToken(ci)
	writeFile(t, adminFile, admin+"\n")
	writeFile(t, tokensFile, line+"\n")

	for _, tt := range []struct {
		name       string
		settings   signin.Settings
		singleUser bool
		want       map[*http.Request]access.Identity // "" for refused
	}{
		{"nothing set on the user's machine: the single-user mode", signin.Settings{LocalMode: true}, true, map[*http.Request]access.Identity{
			caller(true, ""):     access.Local,
			caller(false, ""):    access.Anonymous,
			caller(false, admin): "",
		}},
		{"nothing set in the cloud shape: no caller is local", signin.Settings{}, false, map[*http.Request]access.Identity{
			caller(true, ""): access.Anonymous,
		}},
		{"the admin token alone keeps the single-user mode", signin.Settings{LocalMode: true, AdminTokenFile: adminFile}, true, map[*http.Request]access.Identity{
			caller(true, ""):       access.Local,
			caller(false, admin):   signin.AdminTokenIdentity,
			caller(false, "wrong"): "",
		}},
		{"static tokens end the single-user mode; the admin token is asked before them", signin.Settings{LocalMode: true, AdminTokenFile: adminFile, StaticTokensFile: tokensFile}, false, map[*http.Request]access.Identity{
			caller(true, ""):     access.Anonymous,
			caller(true, admin):  signin.AdminTokenIdentity,
			caller(true, static): ci,
			caller(true, "sundial_0123456789abcdef0123456789abcdef"): "",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := setup(t, tt.settings)
			if s.SingleUser() != tt.singleUser {
				t.Errorf("single user: %t, want %t", s.SingleUser(), tt.singleUser)
			}
			for r, want := range tt.want {
				id, err := s.Chain().Authenticate(r)
				if want == "" && err == nil {
					t.Errorf("%s with %q: %q, want refused", r.RemoteAddr, r.Header.Get("Authorization"), id)
				}
				if want != "" && (err != nil || id != want) {
					t.Errorf("%s with %q: %q, %v; want %q", r.RemoteAddr, r.Header.Get("Authorization"), id, err, want)
				}
			}
			roles, err := s.Roles(access.Settings{})
			if err != nil {
				t.Fatal(err)
			}
			if got := roles.Administrator(access.Local); got != tt.singleUser {
				t.Errorf("a local caller is an administrator: %t, want %t (the single-user mode)", got, tt.singleUser)
			}
			if got, want := roles.Administrator(signin.AdminTokenIdentity), tt.settings.AdminTokenFile != ""; got != want {
				t.Errorf("the admin token's bearer is an administrator: %t, want %t", got, want)
			}
		})
	}
}
