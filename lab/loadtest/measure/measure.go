// Package measure is what `sundial-lab bench` (lab/loadtest) and the River
// harness (lab/river, a module of its own) both measure, kept in one
// place so that the two measure it alike: lateness quantiles, and the
// waits that bound the measured window.
package measure

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Lateness are quantiles of how late launches were, in seconds.
type Lateness struct {
	LatenessP50 float64 `json:"lateness_p50_s"`
	LatenessP90 float64 `json:"lateness_p90_s"`
	LatenessP99 float64 `json:"lateness_p99_s"`
	LatenessMax float64 `json:"lateness_max_s"`
}

// LatenessOf sorts late and reads its quantiles; all zero for none.
func LatenessOf(late []time.Duration) Lateness {
	if len(late) == 0 {
		return Lateness{}
	}
	slices.Sort(late)
	return Lateness{
		LatenessP50: quantile(late, 0.50).Seconds(),
		LatenessP90: quantile(late, 0.90).Seconds(),
		LatenessP99: quantile(late, 0.99).Seconds(),
		LatenessMax: late[len(late)-1].Seconds(),
	}
}

// quantile returns the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// SleepUntil waits until now() reaches t, or ctx is done.
func SleepUntil(ctx context.Context, now func() time.Time, t time.Time) error {
	d := t.Sub(now())
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sampler calls a function at its start and then every interval, until
// Stop.
type Sampler struct {
	quit, done chan struct{}
	once       sync.Once
}

// StartSampler calls sample at once, then every interval, on a goroutine
// of its own.
func StartSampler(interval time.Duration, sample func()) *Sampler {
	s := &Sampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			sample()
			select {
			case <-t.C:
			case <-s.quit:
				return
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns once the last call has returned.
// Calling it again does nothing.
func (s *Sampler) Stop() {
	s.once.Do(func() { close(s.quit) })
	<-s.done
}
