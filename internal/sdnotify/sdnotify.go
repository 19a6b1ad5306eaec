// Package sdnotify tells systemd how a service of Type=notify is doing
// (sd_notify(3)): that it is ready, that it is stopping, and, while it is
// healthy, that it is alive, which pets the watchdog the unit's
// WatchdogSec sets. The messages go to the socket systemd names in
// NOTIFY_SOCKET; outside systemd there is none, and every call does
// nothing.
//
// The environment is left as it is: the command target gives its programs
// a clean environment, so no job's program can speak for the server.
package sdnotify

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Ready tells systemd that the service is up: the unit's start succeeds
// and units ordered after it start. Call it once the listener accepts
// connections and the database has been opened and checked.
func Ready() error { return notify(daemon.SdNotifyReady) }

// Stopping tells systemd that the service has begun to stop on its own
// (SIGTERM), so that the time it takes to finish is not mistaken for a
// hang.
func Stopping() error { return notify(daemon.SdNotifyStopping) }

// Watchdog pets systemd's watchdog every half of its interval, for as
// long as ctx lasts, each time healthy returns nil within that half. When
// healthy fails it pets nothing, logs why, and puts the error in the
// unit's status (systemctl status shows it); systemd, not petted for a
// whole interval, then kills the service with SIGABRT (whose goroutine
// dump goes to the journal) and restarts it as the unit's Restart= says.
// A message systemd does not take is logged and the next one tried: a
// watchdog that is never petted ends the service anyway. It returns at
// once when the unit asks for no watchdog (no WATCHDOG_USEC, or one meant
// for another process), and when ctx ends.
func Watchdog(ctx context.Context, logger *slog.Logger, healthy func(context.Context) error) error {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil || interval == 0 {
		return err
	}
	ticks := time.NewTicker(interval / 2)
	defer ticks.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks.C:
		}
		check, cancel := context.WithTimeout(ctx, interval/2)
		err := healthy(check)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		state := daemon.SdNotifyWatchdog
		switch {
		case err != nil:
			logger.Warn("unhealthy: the systemd watchdog is not petted, and kills the server if this lasts", "watchdog", interval, "err", err)
			failing = true
			state = "STATUS=unhealthy, not petting the watchdog: " + err.Error()
		case failing:
			failing = false
			state += "\nSTATUS=healthy"
		}
		if err := notify(state); err != nil {
			logger.Warn("systemd did not take a message", "err", err)
		}
	}
}

// notify sends state to systemd, if it listens.
func notify(state string) error {
	if _, err := daemon.SdNotify(false, state); err != nil {
		return fmt.Errorf("sdnotify: telling systemd %q: %w", state, err)
	}
	return nil
}
