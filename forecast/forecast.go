// Package forecast computes, from job definitions alone, when jobs will
// launch: the launches per minute or per second over a horizon (a load
// forecast), and what a change of config does to them (Diff). It is pure:
// no I/O, and the start of every horizon is given, never read from a
// clock.
//
// A job's launches are its occurrences as the engine computes them (its
// zone, DST policy, hashing, calendars and active window, through
// engine.Definition.Parse), each delayed by its jitter. What only the
// server knows is left out: a run cap counted from past runs, a pause,
// and where an interval schedule stands, which depends on when its runs
// ended (Launches places it by a hash of the job's id).
package forecast

import (
	"fmt"
	"hash/fnv"
	"iter"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
)

// Job is a job whose launches can be forecast.
type Job struct {
	ID       string // "<project>/<job>"
	Schedule *schedule.Schedule
	Jitter   time.Duration
	// NotBefore, if set, is when the job may launch again: a paused
	// job's resumption. It has no launch before.
	NotBefore time.Time
}

// Of returns the job of a definition, its schedule parsed as the engine
// parses it.
func Of(id string, def *engine.Definition) (Job, error) {
	s, err := def.Parse(id)
	if err != nil {
		return Job{}, err
	}
	return Job{ID: id, Schedule: s, Jitter: def.Policy.Jitter}, nil
}

// Launches yields the job's launch times in [from, to), in order: each
// occurrence plus its jitter. An interval schedule's first launch is from
// plus a part of the interval hashed from the job's id, so that the
// forecast of many interval jobs spreads them as their runs' ends would.
func (j Job) Launches(from, to time.Time) iter.Seq[time.Time] {
	if from.Before(j.NotBefore) {
		from = j.NotBefore
	}
	return func(yield func(time.Time) bool) {
		s := j.Schedule
		if s == nil || s.Kind() == schedule.Triggered {
			return
		}
		if s.Kind() == schedule.Interval {
			j.intervalLaunches(from, to, yield)
			return
		}
		// An occurrence before from may launch after it, by its jitter;
		// the launches of occurrences in order may come out of order by
		// less than the jitter, which the callers' counts do not mind.
		for t := range s.Between(from.Add(-j.Jitter), to) {
			at := t
			if j.Jitter > 0 {
				at = t.Add(statemachine.Jitter(j.ID, t, j.Jitter))
			}
			if at.Before(from) || !at.Before(to) {
				continue
			}
			if !yield(at) {
				return
			}
		}
	}
}

func (j Job) intervalLaunches(from, to time.Time, yield func(time.Time) bool) {
	s := j.Schedule
	every := s.Interval()
	h := fnv.New64a()
	h.Write([]byte(j.ID))
	t := from.Add(time.Duration(h.Sum64() % uint64(every)))
	if w := s.Window(); !w.From.IsZero() && t.Before(w.From) {
		t = w.From
	}
	for ; t.Before(to); t = t.Add(every) {
		if w := s.Window(); !w.Until.IsZero() && t.After(w.Until) {
			return
		}
		if !yield(t) {
			return
		}
	}
}

// sharedKey is what decides a job's launches per step when its id does
// not: jobs with the same key launch as many times in each step, so a
// forecast computes them once. A job whose schedule hashes (H) or that
// has a jitter has none (""), but for steps of whole minutes a hashed
// second moves no launch out of its minute.
func (j Job) sharedKey(step time.Duration) string {
	s := j.Schedule
	if s == nil || j.Jitter > 0 || s.Kind() == schedule.Interval {
		return ""
	}
	if strings.Contains(s.String(), "H") && (step%time.Minute != 0 || !hashesOnlySeconds(s.String())) {
		return ""
	}
	var b strings.Builder
	b.WriteString(s.String())
	b.WriteByte(0)
	b.WriteString(s.Location().String())
	b.WriteByte(0)
	b.WriteString(s.Gap().String() + "/" + s.Repeat().String())
	b.WriteString("\x00" + j.NotBefore.String())
	w := s.Window()
	b.WriteString("\x00" + w.From.String() + "\x00" + w.Until.String())
	for _, c := range s.Skip() {
		b.WriteString("\x00skip " + calendarKey(c))
	}
	for _, c := range s.Only() {
		b.WriteString("\x00only " + calendarKey(c))
	}
	return b.String()
}

// calendarKey names a calendar by identity: the jobs of one revision that
// name a calendar share it.
func calendarKey(c *schedule.Calendar) string { return fmt.Sprintf("%p", c) }

// hashesOnlySeconds reports whether a cron expression hashes its seconds
// field alone.
func hashesOnlySeconds(expr string) bool {
	words := strings.Fields(expr)
	if len(words) > 0 && (strings.HasPrefix(words[0], "CRON_TZ=") || strings.HasPrefix(words[0], "TZ=")) {
		words = words[1:]
	}
	return len(words) >= 6 && !strings.Contains(strings.Join(words[1:], " "), "H")
}
