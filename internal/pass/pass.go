// Package pass is what the once-a-minute passes, watchdog/ and retention/,
// share, as River's maintenance services share their base: the injected
// clock, the logger, and the loop that runs one pass at each tick and logs
// what it did. Each pass is a small type that embeds a Base and has a Pass
// method of its own, which the cloud shape's minute cron calls directly.
package pass

import (
	"context"
	"log/slog"
	"time"
)

// Result is what one pass did, as Run logs it.
type Result interface {
	// Idle reports a pass that found nothing to do: Run logs nothing of
	// it, so a healthy server's log is not a line a minute per pass.
	Idle() bool
	// LogValue is a group of the counts Run logs.
	slog.LogValuer
}

// Base is embedded by each pass. New makes one.
type Base struct {
	name   string
	now    func() time.Time
	logger *slog.Logger
	ticks  <-chan time.Time
	pass   func(context.Context) (Result, error)
}

// New returns the base of the pass called name (its log lines begin with
// it), which Run runs at each of ticks. A nil logger discards; nil ticks
// never come, for a pass that cron calls instead. It panics without now:
// a pass never reads the wall clock.
func New(name string, now func() time.Time, logger *slog.Logger, ticks <-chan time.Time, pass func(context.Context) (Result, error)) Base {
	if now == nil {
		panic(name + ".New: Options.Now is required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return Base{name: name, now: now, logger: logger, ticks: ticks, pass: pass}
}

// Now reads the pass's clock.
func (b *Base) Now() time.Time { return b.now() }

// Logger is where the pass logs.
func (b *Base) Logger() *slog.Logger { return b.logger }

// Run runs a pass at each tick until ctx is done or the ticks end. A pass
// that fails is logged and the next tick tries again, so Run returns nil;
// one cut short because ctx is done is not a failure.
func (b *Base) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-b.ticks:
			if !ok {
				return nil // the ticker is gone: nothing will ask for a pass again
			}
		}
		r, err := b.pass(ctx)
		if err != nil && ctx.Err() == nil {
			b.logger.Error(b.name+" pass failed", "err", err)
		}
		if !r.Idle() {
			b.logger.LogAttrs(ctx, slog.LevelInfo, b.name+" pass", r.LogValue().Group()...)
		}
	}
}
