package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/task"
)

// logObserver writes what the engine did to the log: launches and normal
// ends at debug level (a line per invocation is too many for a busy
// server's default log), failed invocations and watchdog repairs at warn,
// and skipped occurrences at info, except overruns, which a job with
// overlap: skip has by design.
type logObserver struct{ log *slog.Logger }

func (o logObserver) Launched(jobID string, lateness time.Duration) {
	o.log.Debug("launched", "job", jobID, "lateness", lateness)
}

func (o logObserver) Ended(jobID string, status statemachine.Status) {
	level := slog.LevelDebug
	if status == statemachine.StatusFailed {
		level = slog.LevelWarn
	}
	o.log.Log(context.Background(), level, "invocation ended", "job", jobID, "status", status)
}

func (o logObserver) Skipped(jobID string, reason statemachine.SkipReason, count int) {
	level := slog.LevelInfo
	if reason == statemachine.SkipOverrun {
		level = slog.LevelDebug
	}
	o.log.Log(context.Background(), level, "occurrences skipped", "job", jobID, "reason", reason, "count", count)
}

func (o logObserver) Repaired(jobID string) {
	o.log.Warn("watchdog repaired a job", "job", jobID)
}

func (o logObserver) Disabled(jobID string, reason statemachine.Reason) {
	o.log.Info("job disabled", "job", jobID, "reason_kind", reason.Kind, "reason", reason.String())
}

// TaskFailed logs nothing: the engine logs a permanent error's disable,
// and the queue each failed delivery with its error.
func (o logObserver) TaskFailed(string, task.Kind, bool) {}

// observers tells each of its members.
type observers []engine.Observer

func (obs observers) Launched(jobID string, lateness time.Duration) {
	for _, o := range obs {
		o.Launched(jobID, lateness)
	}
}

func (obs observers) Ended(jobID string, status statemachine.Status) {
	for _, o := range obs {
		o.Ended(jobID, status)
	}
}

func (obs observers) Skipped(jobID string, reason statemachine.SkipReason, count int) {
	for _, o := range obs {
		o.Skipped(jobID, reason, count)
	}
}

func (obs observers) Repaired(jobID string) {
	for _, o := range obs {
		o.Repaired(jobID)
	}
}

func (obs observers) Disabled(jobID string, reason statemachine.Reason) {
	for _, o := range obs {
		o.Disabled(jobID, reason)
	}
}

func (obs observers) TaskFailed(jobID string, kind task.Kind, permanent bool) {
	for _, o := range obs {
		o.TaskFailed(jobID, kind, permanent)
	}
}

func (obs observers) Settled(jobID string, s statemachine.JobState) {
	for _, o := range obs {
		if so, ok := o.(engine.StateObserver); ok {
			so.Settled(jobID, s)
		}
	}
}

func (obs observers) Judged(jobID string, kind slo.Kind, target float64, j slo.Judgement) {
	for _, o := range obs {
		if jo, ok := o.(engine.ObjectiveObserver); ok {
			jo.Judged(jobID, kind, target, j)
		}
	}
}
