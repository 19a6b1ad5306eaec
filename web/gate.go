package web

import (
	"fmt"
	"log/slog"
	"net/http"
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
