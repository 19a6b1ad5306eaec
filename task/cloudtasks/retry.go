package cloudtasks

import "time"

// Retry is a queue's retry configuration, as in Cloud Tasks' RetryConfig,
// and the waits Cloud Tasks derives from it: what the stand-in in
// cloudtaskstest and the lab's simulated cloud queue both follow.
type Retry struct {
	// MaxAttempts bounds the dispatches of a task; the last failure deletes
	// it. Zero: unlimited.
	MaxAttempts int
	// The wait before the first retry is MinBackoff; it doubles
	// MaxDoublings times, then grows by the last doubling's step each
	// retry, and never exceeds MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	MaxDoublings           int
}

// DefaultRetry is Cloud Tasks' default retry configuration.
var DefaultRetry = Retry{MaxAttempts: 100, MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Hour, MaxDoublings: 16}

// Backoff is the wait before retry n (n ≥ 1), as Cloud Tasks documents it:
// with 10s, 300s and 3 doublings the waits are 10, 20, 40, 80, 160, 240,
// 300, 300... seconds.
func (r Retry) Backoff(n int) time.Duration {
	wait := r.MinBackoff
	for i := 1; i < n && wait < r.MaxBackoff; i++ {
		if i <= r.MaxDoublings {
			wait *= 2
		} else {
			wait += r.MinBackoff << r.MaxDoublings
		}
	}
	return min(wait, r.MaxBackoff)
}
