package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/sundial-cron/sundial/task"
)

// maxBody is Cloud Tasks' limit on a task's size; a larger body did not
// come from our queue.
const maxTaskBody = 100 << 10

// TaskEndpoint is where Cloud Tasks delivers the cloud shape's tasks: it
// admits what Gate admits, decodes the task with Decode (the queue's
// cloudtasks.Decode) and runs Handler. It answers 2xx when the task is
// done (including a malformed task, which is logged and dropped, since no
// retry would mend it) and 500 when Cloud Tasks should deliver it again.
type TaskEndpoint struct {
	Gate    Gate
	Decode  func(body []byte) (task.Task, error)
	Handler task.Handler
	Logger  *slog.Logger // default slog.Default()
}

// ServeHTTP implements http.Handler.
func (e *TaskEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	Guard(e.Gate, e.Logger, http.HandlerFunc(e.deliver)).ServeHTTP(w, r)
}

func (e *TaskEndpoint) deliver(w http.ResponseWriter, r *http.Request) {
	log := e.Logger
	if log == nil {
		log = slog.Default()
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "task delivery: want POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxTaskBody))
	var tooLarge *http.MaxBytesError
	if err != nil && !errors.As(err, &tooLarge) {
		http.Error(w, "task delivery: reading the body: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if err == nil {
		var t task.Task
		if t, err = e.Decode(body); err == nil {
			e.run(w, r, log, t)
			return
		}
	}
	log.Error("dropping a malformed task", "task_name", taskName(r), "err", err)
	w.WriteHeader(http.StatusNoContent)
}

func (e *TaskEndpoint) run(w http.ResponseWriter, r *http.Request, log *slog.Logger, t task.Task) {
	if err := e.Handler(r.Context(), t); err != nil {
		// 500, not 503 or 429: Cloud Tasks answers those by slowing the
		// whole queue, and one busy project must not slow the others.
		level := slog.LevelWarn
		if errors.Is(err, task.ErrRetryLater) {
			level = slog.LevelDebug
		}
		log.Log(r.Context(), level, "task failed; Cloud Tasks will retry it", "task", t.String(), "retry", retryCount(r), "err", err)
		http.Error(w, "task failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// taskName and retryCount read what Cloud Tasks says about a delivery, for
// logs, from whichever family of headers the target type gets.
func taskName(r *http.Request) string {
	return first(r.Header.Get("X-CloudTasks-TaskName"), r.Header.Get("X-AppEngine-TaskName"))
}

func retryCount(r *http.Request) string {
	return first(r.Header.Get("X-CloudTasks-TaskRetryCount"), r.Header.Get("X-AppEngine-TaskRetryCount"))
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// CronEndpoint serves one pass that the platform's cron asks for (the
// watchdog's, the config refresh): 200 with what the pass did, or 500 so
// the cron's retry or its next minute runs it again. Guard it with the
// cron's Gate.
func CronEndpoint(name string, pass func(context.Context) (any, error), logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "want GET or POST", http.StatusMethodNotAllowed)
			return
		}
		res, err := pass(r.Context())
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			logger.Error("cron pass failed", "pass", name, "err", err)
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		json.NewEncoder(w).Encode(res)
	})
}
