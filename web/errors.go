package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// apiError is an error with the status it answers with.
type apiError struct {
	status int
	msg    string
	header http.Header // extra response headers (Allow, WWW-Authenticate)
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf(format, args...)}
}

// statusOf maps what the engine and the store return to a status: the
// caller's fault is 4xx, ours 5xx.
func statusOf(err error) int {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae.status
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrInvalidCursor):
		return http.StatusBadRequest
	case errors.Is(err, statemachine.ErrRefused):
		return http.StatusConflict
	case errors.Is(err, store.ErrConflict), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// Transient: the same request may well succeed again.
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// api adapts a handler that returns a status and a body, or an error, to
// http.Handler: every answer is JSON, an error {"error": "..."}.
func (s *server) api(h func(r *http.Request) (int, any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body, err := h(r)
		if err != nil {
			status = statusOf(err)
			var ae *apiError
			if errors.As(err, &ae) {
				for k, v := range ae.header {
					w.Header()[k] = v
				}
			}
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			if status >= 500 {
				s.log.Error("API request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			body = map[string]string{"error": err.Error()}
		}
		if status == 0 {
			status = http.StatusOK
		}
		writeJSON(w, s.log, status, body)
	})
}

// writeJSON writes body as the API's JSON answer with status. A failure
// to write goes to log, if set.
func writeJSON(w http.ResponseWriter, log *slog.Logger, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Logs and messages hold <, > and &; escaping them would make the
	// JSON harder to read and buys nothing with nosniff set.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil && log != nil {
		log.Warn("writing an API response failed", "err", err)
	}
}
