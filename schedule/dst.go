package schedule

import (
	"fmt"
	"iter"
	"time"
)

// Gap is what happens to a wall-clock fire time that does not exist because
// the clocks jump forward over it (spring forward).
type Gap int

const (
	// GapDefault is GapSkip for schedules whose hour field is * or a step
	// (they fire at least every few hours and simply carry on), and GapShift
	// for everything else.
	GapDefault Gap = iota
	// GapShift fires at the first instant after the gap: a 02:30 job fires
	// at 03:00 on the day New York springs forward.
	GapShift
	// GapSkip does not fire: the occurrence does not happen that day.
	GapSkip
)

// Repeat is what happens to a wall-clock fire time that happens twice because
// the clocks fall back over it.
type Repeat int

const (
	// RepeatDefault is RepeatBoth for schedules whose hour field is * or a
	// step, so an every-15-minutes job fires every 15 real minutes through
	// the repeated hour, and RepeatFirst for everything else.
	RepeatDefault Repeat = iota
	// RepeatFirst fires at the first of the two instants.
	RepeatFirst
	// RepeatLast fires at the second of the two instants.
	RepeatLast
	// RepeatBoth fires at both.
	RepeatBoth
)

// ParseGap parses "skip" or "shift"; the empty string is GapDefault.
func ParseGap(s string) (Gap, error) {
	switch s {
	case "":
		return GapDefault, nil
	case "shift":
		return GapShift, nil
	case "skip":
		return GapSkip, nil
	}
	return 0, fmt.Errorf("dst gap %q: expected skip or shift", s)
}

// ParseRepeat parses "first", "last" or "both"; the empty string is
// RepeatDefault.
func ParseRepeat(s string) (Repeat, error) {
	switch s {
	case "":
		return RepeatDefault, nil
	case "first":
		return RepeatFirst, nil
	case "last":
		return RepeatLast, nil
	case "both":
		return RepeatBoth, nil
	}
	return 0, fmt.Errorf("dst repeat %q: expected first, last or both", s)
}

func (g Gap) String() string {
	switch g {
	case GapShift:
		return "shift"
	case GapSkip:
		return "skip"
	}
	return "default"
}

func (r Repeat) String() string {
	switch r {
	case RepeatFirst:
		return "first"
	case RepeatLast:
		return "last"
	case RepeatBoth:
		return "both"
	}
	return "default"
}

// period is a stretch of time with one UTC offset: on it, wall-clock time and
// Unix time differ by a constant, so the wall-clock search applies directly.
// Around it, the offsets of its neighbours say which of its wall-clock times
// also exist in a neighbour (a repeat) and which were jumped over (a gap).
type period struct {
	start, end int64 // Unix seconds; [start, end)
	bounded    struct{ start, end bool }
	off        int64 // UTC offset in seconds
	prevOff    int64 // offset of the period before start, if bounded.start
	nextOff    int64 // offset of the period from end, if bounded.end
}

// periodAt returns the longest stretch of one UTC offset around Unix time u.
//
// It walks outwards over boundaries where the offset does not change: the
// time package splits its rule-based periods (beyond a zone's listed
// transitions) at every new year, and in leap years reports one of those
// boundaries a day early, as the end of a period that still contains the
// instant asked about. Merging same-offset periods makes the result exact
// and saves hops in the search.
func periodAt(loc *time.Location, u int64) period {
	var p period
	p.off, p.start, p.end, p.bounded.start, p.bounded.end = zoneAt(loc, u)
	for p.bounded.end {
		x := max(p.end, u+1)
		off, _, end, _, bounded := zoneAt(loc, x)
		if off != p.off {
			p.end, p.nextOff = x, off
			break
		}
		if end <= x {
			end = x + 86400 // the early-reported new year: step over that day
		}
		p.end, p.bounded.end = end, bounded
	}
	for p.bounded.start {
		off, start, _, bounded, _ := zoneAt(loc, p.start-1)
		if off != p.off {
			p.prevOff = off
			break
		}
		p.start, p.bounded.start = min(start, p.start-1), bounded
	}
	return p
}

// zoneAt returns the UTC offset at Unix time u and the bounds the time
// package reports for it.
func zoneAt(loc *time.Location, u int64) (off, start, end int64, hasStart, hasEnd bool) {
	t := time.Unix(u, 0).In(loc)
	_, o := t.Zone()
	s, e := t.ZoneBounds()
	return int64(o), s.Unix(), e.Unix(), !s.IsZero(), !e.IsZero()
}

// secondOfTwo reports whether wall-clock time w (seconds) of this period also
// happened in the previous period, just before the clocks fell back.
func (p *period) secondOfTwo(w int64) bool {
	return p.bounded.start && p.prevOff > p.off && w < p.start+p.prevOff
}

// firstOfTwo reports whether wall-clock time w of this period happens again
// in the next period, after the clocks fall back.
func (p *period) firstOfTwo(w int64) bool {
	return p.bounded.end && p.nextOff < p.off && w >= p.end+p.nextOff
}

func (r Repeat) first() bool  { return r != RepeatLast }
func (r Repeat) second() bool { return r != RepeatFirst }

const (
	// rulesFrom (2200-01-01Z) is later than every transition the tz
	// database lists one by one (Morocco's run to 2087); after it, every
	// zone's offsets come from its yearly rule.
	rulesFrom = 7258118400
	// cycleSeconds is the 400 years of the Gregorian cycle.
	cycleSeconds = 146097 * 86400
)

// nextAfter returns the first fire time strictly after Unix time u.
//
// It walks the offset periods from u forwards. In each period it takes the
// first matching wall-clock time, drops it if the Repeat policy does not want
// that copy of a repeated time, and otherwise returns it. A period that ends
// in a spring-forward gap containing a matching time fires at its end under
// GapShift: the first instant after the gap.
func (s *Schedule) nextAfter(u int64) (int64, bool) {
	var m nextMemo
	m.spec = &s.cron
	// A wall-clock time that only ever falls in a skipped gap (02:30 on the
	// second Sunday of March in New York) matches in every year and fires in
	// none: without a limit the walk would never end. Zones follow their
	// yearly rules after rulesFrom, so zone and calendar repeat every 400
	// years from there, and 400 years without a fire time mean none ever.
	limit := max(u, rulesFrom) + cycleSeconds
	for {
		if u >= limit {
			return 0, false
		}
		p := periodAt(s.loc, u+1)
		if u+1 == p.start && p.bounded.start && p.prevOff < p.off && s.gap == GapShift {
			// u is the last instant before a gap, so the search below
			// starts after it: the gap's shifted fire time is p.start.
			if g, ok := m.next(p.start + p.prevOff); ok && g < p.start+p.off {
				return p.start, true
			}
		}
		from := u + 1 + p.off
		w, ok := m.next(from)
		if !ok && (!p.bounded.end || p.end+p.nextOff >= from) {
			// Later periods start at wall-clock times >= from, where
			// nothing matches.
			return 0, false
		}
		for ok && (!p.bounded.end || w < p.end+p.off) {
			switch {
			case p.secondOfTwo(w) && !s.repeat.second():
				w, ok = m.next(p.start + p.prevOff)
			case p.firstOfTwo(w) && !s.repeat.first():
				ok = false
			default:
				return w - p.off, true
			}
		}
		if !p.bounded.end {
			return 0, false
		}
		if p.nextOff > p.off && s.gap == GapShift {
			if g, ok := m.next(p.end + p.off); ok && g < p.end+p.nextOff {
				return p.end, true
			}
		}
		u = p.end - 1
	}
}

// atOrBefore returns the latest fire time at or before Unix time u: the
// mirror of nextAfter.
func (s *Schedule) atOrBefore(u int64) (int64, bool) {
	var m prevMemo
	m.spec = &s.cron
	for {
		p := periodAt(s.loc, u)
		from := u + p.off
		w, ok := m.prev(from)
		if !ok && (!p.bounded.start || p.start+p.prevOff-1 <= from) {
			return 0, false
		}
		for ok && (!p.bounded.start || w >= p.start+p.off) {
			switch {
			case p.firstOfTwo(w) && !s.repeat.first():
				w, ok = m.prev(p.end + p.nextOff - 1)
			case p.secondOfTwo(w) && !s.repeat.second():
				ok = false
			default:
				return w - p.off, true
			}
		}
		if !p.bounded.start {
			return 0, false
		}
		if p.prevOff < p.off && s.gap == GapShift {
			if g, ok := m.prev(p.start + p.off - 1); ok && g >= p.start+p.prevOff {
				return p.start, true
			}
		}
		u = p.start - 1
	}
}

// nextMemo remembers the last wall-clock search, because walking a zone's
// periods repeats the same search: a rare schedule (the fifth Monday of a
// February) is searched once, not once per DST period on the way.
type nextMemo struct {
	spec     *cronSpec
	valid    bool
	from, at int64 // nothing matches in [from, at); at matches (if found)
	found    bool
}

// next returns the earliest matching wall-clock time (seconds) >= from.
func (m *nextMemo) next(from int64) (int64, bool) {
	if m.valid && from >= m.from && (!m.found || from <= m.at) {
		return m.at, m.found
	}
	c, ok := m.spec.next(clockOf(from))
	m.valid, m.from, m.found = true, from, ok
	if ok {
		m.at = c.seconds()
	}
	return m.at, ok
}

// prevMemo is the mirror of nextMemo.
type prevMemo struct {
	spec     *cronSpec
	valid    bool
	from, at int64 // nothing matches in (at, from]; at matches (if found)
	found    bool
}

// prev returns the latest matching wall-clock time (seconds) <= from.
func (m *prevMemo) prev(from int64) (int64, bool) {
	if m.valid && from <= m.from && (!m.found || from >= m.at) {
		return m.at, m.found
	}
	c, ok := m.spec.prev(clockOf(from))
	m.valid, m.from, m.found = true, from, ok
	if ok {
		m.at = c.seconds()
	}
	return m.at, ok
}

// GapSkipped yields the spring-forward gaps ending in [from, to) that
// swallowed fire times of this schedule under GapSkip: the instant each gap
// ends (where GapShift would have fired) and how many wall-clock fire times
// fell in it; only gaps ending within the active window. The engine records them, so that a skipped occurrence is
// never a silent one. Under GapShift, and for interval and triggered
// schedules, it yields nothing.
func (s *Schedule) GapSkipped(from, to time.Time) iter.Seq2[time.Time, int] {
	return func(yield func(time.Time, int) bool) {
		if s.kind != Cron || s.gap != GapSkip {
			return
		}
		m := nextMemo{spec: &s.cron}
		// Start in the period before from: a gap ending at from is in.
		for u := from.Unix() - 1; ; {
			p := periodAt(s.loc, u)
			gapEnd := time.Unix(p.end, 0)
			if !p.bounded.end || !gapEnd.Before(to) {
				return
			}
			if w := s.window; !w.Until.IsZero() && gapEnd.After(w.Until) {
				return
			}
			if p.nextOff > p.off && !gapEnd.Before(from) && !gapEnd.Before(s.window.From) {
				n := 0
				for w, ok := m.next(p.end + p.off); ok && w < p.end+p.nextOff; w, ok = m.next(w + 1) {
					n++
				}
				if n > 0 && !yield(gapEnd.In(s.loc), n) {
					return
				}
			}
			u = p.end
		}
	}
}
