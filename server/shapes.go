package server

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// A shape is one way to run Sundial: where its state lives, how its tasks
// are queued and delivered, and what calls its once-a-minute passes. Only
// the store and the task queue differ between shapes; Run wires the same
// engine, passes, API, console and sign-in over each.
type shape struct {
	// check refuses settings the shape cannot run with. It may fill in
	// what the shape's environment says (the cloud's $PORT).
	check func(s *Settings) error
	// open opens the shape's store and task queue. The engine is made
	// over them afterwards: tasks reach it through handle and prepare.
	open func(ctx context.Context, s *Settings, env environment) (*backends, error)
}

// shapes are every shape this binary runs, by the name --backend gives.
var shapes = map[string]shape{
	"embedded": {check: checkEmbedded, open: openEmbedded},
	"cloud":    {check: checkCloud, open: openCloud},
	"postgres": {check: checkPostgres, open: openPostgres},
}

// ShapeNames are the names of the shapes, sorted.
func ShapeNames() []string { return slices.Sorted(maps.Keys(shapes)) }

// environment is what a shape's backends are opened with.
type environment struct {
	logger *slog.Logger
	now    func() time.Time
	// handle and prepare hand a task to the engine, which is made once the
	// backends are open.
	handle  task.Handler
	prepare task.Preparer
}

// backends are a shape's store and task queue, and what differs in how
// the rest runs over them.
type backends struct {
	store store.Store
	queue task.Queue
	// config is the engine's configuration in this shape.
	config statemachine.Config
	// backlog counts the queue's tasks for /metrics; nil where the queue
	// cannot count them cheaply.
	backlog web.Backlog
	// metrics are the shape's own, served at /metrics beside the
	// engine's.
	metrics []prometheus.Collector
	// instances lists the instances serving from the store, for GET
	// /api/v1/instances; nil where the shape keeps no such list.
	instances func(context.Context) ([]web.Instance, error)
	// ticks ask the passes for their work in-process; nil channels where
	// something outside calls them over HTTP (routes).
	ticks ticks
	// services run beside the HTTP server until it stops (the dispatcher).
	services []service
	// routes add the shape's internal endpoints (task delivery, the minute
	// cron) in front of the API; nil for none.
	routes func(mux *http.ServeMux, p parts) error
	// localMode says callers on the server's machine may be the
	// administrator when no sign-in is configured (signin.Settings'
	// LocalMode): only where the server shares its machine with its
	// operator.
	localMode bool
	// oneProcess says the shape is one process, not many instances
	// behind a load balancer (signin.Settings' OneProcess).
	oneProcess bool
	// commands says the shape runs the command target.
	commands bool
	// ownHosts are host names by which the service itself is called,
	// which url_fetch must not reach.
	ownHosts []string
	// revocations is the list of ended sessions every instance sees.
	revocations func() (signin.Revocations, error)
	// logAttrs say where the shape's state is, in the "listening" line.
	logAttrs []any
	// shutdownGrace is how long requests under way may go on once the
	// server stops: in the cloud shape they are tasks running launches.
	shutdownGrace time.Duration
	// close releases the backends once everything over them stopped.
	close func()
}
