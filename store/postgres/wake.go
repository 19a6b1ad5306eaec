package postgres

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// wakeChannel is the channel of PostgreSQL's LISTEN/NOTIFY on which an
// instance tells the others that it enqueued a task due at a time.
const wakeChannel = "sundial_tasks"

// Announcer tells the other instances of tasks enqueued here, so that one
// sleeping past a task's ETA wakes for it instead of at its next poll.
// Each NOTIFY costs a commit that serializes with every other notifying
// commit of the server, so it announces only an ETA earlier than the
// earliest it announced that is still to come: an instance woken for that
// one claims, and looks again for the next, whatever was enqueued behind
// it.
type Announcer struct {
	s   *Store
	now func() time.Time
	mu  sync.Mutex
	// pending is the earliest ETA announced that has not passed.
	pending time.Time
}

// NewAnnouncer returns the store's Announcer, on the clock now.
func (s *Store) NewAnnouncer(now func() time.Time) *Announcer {
	return &Announcer{s: s, now: now}
}

// Announce tells the other instances of a task due at eta, unless one due
// no later was announced and is still to come. A failure is the caller's
// to log: the others' polls still find the task.
func (a *Announcer) Announce(ctx context.Context, eta time.Time) error {
	a.mu.Lock()
	now := a.now()
	if a.pending.After(now) && !eta.Before(a.pending) {
		a.mu.Unlock()
		return nil
	}
	a.pending = eta
	a.mu.Unlock()
	_, err := a.s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", wakeChannel, strconv.FormatInt(eta.UnixNano(), 10))
	return err
}

// Listen calls wake with the ETA of each task another instance announces,
// on a connection of its own (a session: LISTEN does not work through
// PgBouncer in transaction mode, where the others' polls still find the
// tasks), until ctx is done. After a lost connection it connects again and
// calls wake with the time now, for what it may have missed.
func Listen(ctx context.Context, url string, now func() time.Time, logger *slog.Logger, wake func(eta time.Time)) error {
	backoff := time.Second
	for ctx.Err() == nil {
		err := listenOnce(ctx, url, func() { backoff = time.Second; wake(now()) }, wake)
		if ctx.Err() != nil {
			return nil
		}
		logger.Warn("postgres: listening for other instances' tasks failed; polling meanwhile", "err", redact(err), "retry_in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
	return nil
}

// listenOnce listens on one connection until it fails; listening calls
// connected once LISTEN took.
func listenOnce(ctx context.Context, url string, connected func(), wake func(time.Time)) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+wakeChannel); err != nil {
		return err
	}
	connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if ns, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			wake(time.Unix(0, ns))
		}
	}
}
