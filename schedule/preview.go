package schedule

import (
	"fmt"
	"time"
)

// Lookahead says which occurrences a Preview lists: the next N strictly
// after From. When Capped, the job's run cap (max_runs) allows RunsLeft
// more of them; those after are listed as removed by the cap. When
// Paused, those before PausedUntil (every one, when it is zero) are
// listed as removed by the pause.
type Lookahead struct {
	From        time.Time
	N           int
	Capped      bool
	RunsLeft    int64
	Paused      bool
	PausedUntil time.Time
}

// PreviewLine is one line of a Preview: an occurrence (Why is ""), or
// fire times of the schedule's expression that are not occurrences, the
// first to the last of Count of them in a row, all for the reason Why.
type PreviewLine struct {
	First, Last time.Time
	Count       int
	Why         string
}

// Removed reports whether the line is of fire times that are not
// occurrences.
func (l PreviewLine) Removed() bool { return l.Why != "" }

// A Preview is a job's coming fire times as the server will run them,
// with those its expression has but the job does not and why: what
// `sundial schedule next --config` prints and the console's job page and
// playground show.
type Preview struct {
	Lines []PreviewLine
	// End says, when fewer occurrences come than were asked for, after
	// which none does and why; "" otherwise.
	End string
}

// Reasons a Preview gives for fire times that are not occurrences, beside
// Removal's.
const (
	// WhyDSTGap: its wall-clock time did not exist that day, and the
	// schedule's gap policy is skip. Such a line's First and Last are the
	// instant the gap ended.
	WhyDSTGap = "in the DST gap (the clocks sprang forward), skipped under dst_gap skip"
	// WhyRunCap: the job's run cap (max_runs) is reached before it.
	WhyRunCap = "past the job's max_runs"
	// WhyPaused: the job is paused then; it is recorded skipped.
	WhyPaused = "while the job is paused"
)

// Preview lists the occurrences la asks for and, before and between
// them, the fire times of the expression that are not occurrences, with
// why; a run of them for one reason is one line. Interval and triggered
// schedules have only occurrences.
func (s *Schedule) Preview(la Lookahead) Preview {
	var p Preview
	add := func(t time.Time, count int, why string) {
		if n := len(p.Lines); why != "" && n > 0 && p.Lines[n-1].Why == why {
			p.Lines[n-1].Last = t
			p.Lines[n-1].Count += count
			return
		}
		p.Lines = append(p.Lines, PreviewLine{First: t, Last: t, Count: count, Why: why})
	}
	kept := int64(0)
	keep := func(t time.Time) {
		if la.Paused && (la.PausedUntil.IsZero() || t.Before(la.PausedUntil)) {
			add(t, 1, WhyPaused)
			return
		}
		if la.Capped && kept >= la.RunsLeft {
			add(t, 1, WhyRunCap)
			return
		}
		kept++
		add(t, 1, "")
	}
	// The last occurrence to list bounds the walk over the expression's
	// fire times; when there are fewer, the last there is does, and why
	// none follows is said instead.
	end, shown := la.From, 0
	for t, ok := s.Next(la.From); ok && shown < la.N; t, ok = s.Next(t) {
		end, shown = t, shown+1
		if s.kind != Cron {
			keep(t)
		}
	}
	if la.N == 0 {
		return p
	}
	if s.kind == Cron {
		from, to := la.From.Add(time.Second).Truncate(time.Second), end.Add(time.Second)
		gaps := gapEnds(s, from, to)
		for t, r := range s.FireTimes(from, to) {
			for len(gaps) > 0 && !gaps[0].at.After(t) {
				add(gaps[0].at, gaps[0].n, WhyDSTGap)
				gaps = gaps[1:]
			}
			if r.Kind == Kept {
				keep(t)
			} else {
				add(t, 1, r.String())
			}
		}
		for _, g := range gaps {
			add(g.at, g.n, WhyDSTGap)
		}
	}
	if s.kind == Cron && shown < la.N {
		p.End = fmt.Sprintf("no more occurrences after %s: %s", end.In(s.loc).Format(time.RFC3339), s.noMore(end))
	}
	return p
}

type gapEnd struct {
	at time.Time
	n  int
}

// gapEnds lists GapSkipped's gaps in [from, to).
func gapEnds(s *Schedule, from, to time.Time) []gapEnd {
	var out []gapEnd
	for at, n := range s.GapSkipped(from, to) {
		out = append(out, gapEnd{at, n})
	}
	return out
}

// noMore says why the schedule has no occurrence after t.
func (s *Schedule) noMore(t time.Time) string {
	if u := s.window.Until; !u.IsZero() && !u.After(t.Add(400*24*time.Hour)) {
		return "its active window ends " + u.In(s.loc).Format(time.RFC3339)
	}
	if len(s.skip)+len(s.only) > 0 {
		return "its calendars remove every later fire time"
	}
	return "its expression has no later fire time"
}

// Setting is one thing besides its expression that decides a schedule's
// occurrences, as a reader is told it: "time zone", "America/New_York".
type Setting struct{ Name, Value string }

// Settings lists what, besides its expression, decides the schedule's
// occurrences: its time zone, its DST policy (cron schedules), the
// calendars it runs only on and skips, and its active window.
func (s *Schedule) Settings() []Setting {
	out := []Setting{{"time zone", s.loc.String()}}
	if s.kind == Cron {
		out = append(out, Setting{"DST", fmt.Sprintf("gap %s, repeat %s", s.gap, s.repeat)})
	}
	for _, c := range s.only {
		out = append(out, Setting{"only on", c.String()})
	}
	for _, c := range s.skip {
		out = append(out, Setting{"skips", c.String()})
	}
	if w := s.window; !w.IsZero() {
		out = append(out, Setting{"active", bound(w.From, s.loc, "the start") + " to " + bound(w.Until, s.loc, "no end")})
	}
	return out
}

func bound(t time.Time, loc *time.Location, none string) string {
	if t.IsZero() {
		return none
	}
	return t.In(loc).Format(time.RFC3339Nano)
}
