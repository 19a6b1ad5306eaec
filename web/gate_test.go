package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

func TestHeaderGates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		gate    web.Header
		headers map[string][]string
		wantErr string
	}{
		{"a task from our queue is admitted", web.AppEngineQueue("sundial"), map[string][]string{"X-Appengine-Queuename": {"sundial"}}, ""},
		{"a request without the queue header is refused", web.AppEngineQueue("sundial"), nil, "no X-AppEngine-QueueName"},
		{"a task from another queue is refused", web.AppEngineQueue("sundial"), map[string][]string{"X-Appengine-Queuename": {"other"}}, `"other"`},
		{"a queue header given twice is refused", web.AppEngineQueue("sundial"), map[string][]string{"X-Appengine-Queuename": {"sundial", "sundial"}}, "want"},
		{"App Engine cron is admitted", web.AppEngineCron(), map[string][]string{"X-Appengine-Cron": {"true"}}, ""},
		{"a request without the cron header is refused", web.AppEngineCron(), map[string][]string{"X-Cloudtasks-Queuename": {"sundial"}}, "no X-Appengine-Cron"},
		{"a cron header that is not true is refused", web.AppEngineCron(), map[string][]string{"X-Appengine-Cron": {"yes"}}, `"yes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/internal/x", nil)
			for k, vs := range tt.headers {
				r.Header[k] = vs
			}
			err := tt.gate.Admit(r)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Admit = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Admit = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

const (
	account  = "sundial-tasks@proj.iam.gserviceaccount.com"
	audience = "https://sundial.example.com/internal/tasks"
)

// newSignedBy returns a gate that trusts is, expecting account and
// audience, on the clock now.
func newSignedBy(t *testing.T, is *cloudtaskstest.Issuer, now func() time.Time) web.Gate {
	t.Helper()
	g, err := web.SignedBy(account, signin.IDTokenOptions{
		Issuer: is.URL(), KeysURL: is.KeysURL(), Audience: audience, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newIssuer(t *testing.T) *cloudtaskstest.Issuer {
	t.Helper()
	is, err := cloudtaskstest.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(is.Close)
	return is
}

func TestSignedByGate(t *testing.T) {
	t.Parallel()
	is, forger := newIssuer(t), newIssuer(t)
	gate := newSignedBy(t, is, func() time.Time { return t0 })
	good := cloudtaskstest.Claims{Audience: audience, Email: account, EmailVerified: true, IssuedAt: t0, Expiry: t0.Add(time.Hour)}
	with := func(change func(*cloudtaskstest.Claims)) cloudtaskstest.Claims {
		c := good
		change(&c)
		return c
	}
	tests := []struct {
		name          string
		authorization string
		wantErr       string
	}{
		{"a token Google signed for our account and audience is admitted", "Bearer " + is.Sign(good), ""},
		{"a request without a token is refused", "", "no bearer token"},
		{"a token that is not a bearer token is refused", "Basic " + is.Sign(good), "no bearer token"},
		{"a token that is not a JWT is refused", "Bearer not-a-jwt", "no bearer token"},
		{"a token signed by someone else in the issuer's name is refused", "Bearer " + forger.Sign(with(func(c *cloudtaskstest.Claims) { c.Issuer = is.URL() })), "signature"},
		{"a token from another issuer is refused (its keys are not the issuer's)", "Bearer " + forger.Sign(good), "signature"},
		{"a token naming another issuer is refused", "Bearer " + is.Sign(with(func(c *cloudtaskstest.Claims) { c.Issuer = "https://accounts.example.com" })), "different provider"},
		{"a token for another audience is refused", "Bearer " + is.Sign(with(func(c *cloudtaskstest.Claims) { c.Audience = "https://evil.example.com" })), "audience"},
		{"a token for another account is refused", "Bearer " + is.Sign(with(func(c *cloudtaskstest.Claims) { c.Email = "someone@proj.iam.gserviceaccount.com" })), "someone@"},
		{"a token whose email is not verified is refused", "Bearer " + is.Sign(with(func(c *cloudtaskstest.Claims) { c.EmailVerified = false })), "verified false"},
		{"an expired token is refused", "Bearer " + is.Sign(with(func(c *cloudtaskstest.Claims) { c.IssuedAt, c.Expiry = t0.Add(-2*time.Hour), t0.Add(-time.Hour) })), "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/internal/tasks", nil)
			if tt.authorization != "" {
				r.Header.Set("Authorization", tt.authorization)
			}
			err := gate.Admit(r)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Admit = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Admit = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestSignedByRefusesIncompleteOptions(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return t0 }
	tests := []struct {
		name    string
		account string
		opts    signin.IDTokenOptions
		wantErr string
	}{
		{"no audience", account, signin.IDTokenOptions{Now: now}, "audience: missing"},
		{"no service account", "", signin.IDTokenOptions{Audience: audience, Now: now}, "service account"},
		{"no clock", account, signin.IDTokenOptions{Audience: audience}, "Now: missing"},
		{"an issuer without its keys", account, signin.IDTokenOptions{Issuer: "https://issuer.example.com", Audience: audience, Now: now}, "keys URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := web.SignedBy(tt.account, tt.opts); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("SignedBy = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
