package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// readyWithin bounds GET /readyz's read of the store: a store slower than
// this takes the instance out of its load balancer, and a probe with a
// longer timeout hears why rather than timing out.
const readyWithin = 2 * time.Second

// ready answers GET /readyz: 200 while the store answers a cheap read
// (store.Answers) within readyWithin, else 503 with a plain reason. The
// store's error goes to the log alone, since it may name the database's
// host and user, and the probe is open to every caller.
func (s *server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyWithin)
	defer cancel()
	err := store.Answers(ctx, s.st)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err == nil {
		io.WriteString(w, "ok\n")
		return
	}
	reason := "not ready: the store failed a read (the server's log says why)\n"
	if errors.Is(err, context.DeadlineExceeded) {
		reason = "not ready: the store did not answer within " + readyWithin.String() + "\n"
	}
	s.log.Warn("not ready: the store does not answer", "err", err)
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, reason)
}
