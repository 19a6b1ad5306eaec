package web

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web/signin"
)

// Gate decides whether a request to an internal endpoint comes from Cloud
// Tasks or the platform's cron, and not from the outside.
type Gate interface {
	// Admit returns nil for a request from inside, and otherwise an error
	// saying why it was refused.
	Admit(r *http.Request) error
}

// Header admits requests whose header Name is Value. It is only sound
// where the platform removes Name from outside requests, as App Engine
// does with X-AppEngine-* and X-CloudTasks-* headers.
type Header struct {
	Name, Value string
}

// AppEngineQueue admits the tasks Cloud Tasks delivers from queue (its
// short name) to an App Engine target.
func AppEngineQueue(queue string) Header {
	return Header{Name: "X-AppEngine-QueueName", Value: queue}
}

// AppEngineCron admits the requests of App Engine cron (cron.yaml).
func AppEngineCron() Header {
	return Header{Name: "X-Appengine-Cron", Value: "true"}
}

// Admit implements Gate.
func (h Header) Admit(r *http.Request) error {
	got := r.Header.Values(h.Name)
	switch {
	case len(got) == 0:
		return fmt.Errorf("no %s header", h.Name)
	case len(got) > 1 || got[0] != h.Value:
		return fmt.Errorf("header %s is %q, want %q", h.Name, got, h.Value)
	}
	return nil
}

// signedBy admits the requests whose bearer token is a Google-signed ID
// token of one service account.
type signedBy struct {
	tokens  *signin.IDTokens
	account access.Identity
}

// SignedBy returns the gate that admits requests bearing an ID token
// Google signed for account, the service account's email, as opts says
// (the audience: the endpoint's URL): what Cloud Tasks, Cloud Scheduler
// and a Pub/Sub push subscription send on Cloud Run, where any header can
// come from outside. The token is checked by sign-in's verifier
// (signin.IDTokens).
func SignedBy(account string, opts signin.IDTokenOptions) (Gate, error) {
	id, err := access.ParseIdentity(string(access.ServiceAccount(account)))
	if err != nil {
		return nil, fmt.Errorf("oidc gate: service account %q: want the account's email", account)
	}
	tokens, err := signin.NewIDTokens(opts)
	if err != nil {
		return nil, fmt.Errorf("oidc gate: %w", err)
	}
	return signedBy{tokens: tokens, account: id}, nil
}

// Admit implements Gate.
func (g signedBy) Admit(r *http.Request) error {
	id, err := g.tokens.Authenticate(r)
	switch {
	case err != nil:
		return err
	case id == access.Anonymous:
		return errors.New("no bearer token that is an ID token")
	case id != g.account:
		return fmt.Errorf("the token is for %s, want %s", id, g.account)
	}
	return nil
}

// Guard serves next only the requests gate admits, and answers 403 to the
// others, logging why.
func Guard(gate Gate, log *slog.Logger, next http.Handler) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := gate.Admit(r); err != nil {
			log.Warn("refused a request to an internal endpoint", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", err)
			http.Error(w, "forbidden: internal endpoint", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
