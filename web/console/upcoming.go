package console

import (
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
)

// upcoming is a schedule's coming fire times with all that decides them,
// as `sundial schedule explain --config` says them (schedule.Preview): the
// job page's and the playground's.
type upcoming struct {
	Settings []field // time zone, DST policy, calendars, window, run cap, jitter
	Lines    []upcomingLine
	End      string // why no occurrence follows the last, when fewer came than asked for
	Removed  int    // fire times of the expression listed as not occurrences
}

// upcomingLine is an occurrence, or fire times of the expression in a row
// that are not occurrences, all for one reason (Why).
type upcomingLine struct {
	fireTime
	Last   *fireTime // the last of a run of more than one; nil for one
	Count  int
	Why    string
	Launch string // when jitter delays an occurrence's launch, to when
}

// upcomingOf lays a schedule's preview out for a page. An occurrence
// after a change of the zone's offset since the one before (or since from)
// says so, and with jitter its launch time is given.
func upcomingOf(s *schedule.Schedule, la schedule.Lookahead, jitter func(time.Time) time.Duration) upcoming {
	p := s.Preview(la)
	u := upcoming{End: p.End}
	for _, set := range s.Settings() {
		u.Settings = append(u.Settings, field{set.Name, set.Value})
	}
	loc := s.Location()
	prev := la.From.In(loc)
	for _, l := range p.Lines {
		line := upcomingLine{fireTime: inZone(l.First, loc), Count: l.Count, Why: l.Why}
		if l.Removed() {
			u.Removed += l.Count
			if !l.Last.Equal(l.First) {
				last := inZone(l.Last, loc)
				line.Last = &last
			}
			u.Lines = append(u.Lines, line)
			continue
		}
		local := l.First.In(loc)
		pn, po := prev.Zone()
		if ln, lo := local.Zone(); lo != po {
			line.Note = fmt.Sprintf("DST: the offset changes before this one, %s (%s) to %s (%s)", pn, offset(po), ln, offset(lo))
		}
		if j := jitter(l.First); j > 0 {
			line.Launch = fmt.Sprintf("jitter +%s: launched at %s", j, l.First.Add(j).In(loc).Format("15:04:05.000"))
		}
		u.Lines = append(u.Lines, line)
		prev = local
	}
	return u
}

func inZone(t time.Time, loc *time.Location) fireTime {
	return fireTime{T: t, Zone: t.In(loc).Format("Mon 2006-01-02 15:04:05 MST")}
}

// noJitter is the jitter of a schedule with no job behind it.
func noJitter(time.Time) time.Duration { return 0 }

// jobUpcoming is a job's next occurrences as the server will run them:
// its schedule's preview, with its cap on runs counted from the runs it
// has had, its pause, and its jitter.
func jobUpcoming(s *schedule.Schedule, view engine.View, now time.Time) upcoming {
	p := view.Definition.Policy
	la := schedule.Lookahead{From: now, N: fireTimes}
	la.RunsLeft, la.Capped = statemachine.RunsLeft(view.State, p)
	if view.State.State == statemachine.Paused {
		la.Paused, la.PausedUntil = true, view.State.PausedUntil
	}
	u := upcomingOf(s, la, func(t time.Time) time.Duration { return statemachine.Jitter(view.Job.ID, t, p.Jitter) })
	if la.Capped {
		u.Settings = append(u.Settings, field{"max_runs", fmt.Sprintf("%d scheduled runs; %d left", p.MaxRuns, la.RunsLeft)})
	}
	if p.Jitter > 0 {
		u.Settings = append(u.Settings, field{"jitter", "below " + p.Jitter.String() + ", hashed from the job and the occurrence"})
	}
	return u
}

func offset(secs int) string {
	sign := "+"
	if secs < 0 {
		sign, secs = "-", -secs
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, secs/3600, secs%3600/60)
}
