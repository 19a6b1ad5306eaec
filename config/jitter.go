package config

import (
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

// The jitter check looks at a schedule's fire times in a year from a
// fixed instant, so that `sundial validate` gives the same answer on any
// day. Cron fields repeat every day, month or year, so the shortest gap
// shows up within it; schedule.ShortestGap finds it at a cost that does
// not depend on how often the schedule fires.
var periodCheckFrom = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const periodCheckSpan = 366 * 24 * time.Hour

// gapWithin returns the shortest gap between two consecutive fire times of
// s, and whether it is at most max: a jitter that large could reorder
// them. A triggered schedule has no gap.
func gapWithin(s *schedule.Schedule, max time.Duration) (time.Duration, bool) {
	gap, ok := s.ShortestGap(periodCheckFrom, periodCheckSpan)
	return gap, ok && gap <= max
}
