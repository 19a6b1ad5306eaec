package schedule

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The property test generates random cron expressions as structure, renders
// them to text for Parse, and checks Next, Prev and Between against an
// oracle that walks a window second by second and decides each instant from
// the expression's documented meaning. The oracle shares no code with the
// package: it has its own field sets and day rules, reads offsets only
// through time.Time.Zone, and computes calendar facts with the time package.
// Only the H hash is reimplemented, because it is frozen by design.

var (
	propSeed   = flag.Uint64("schedule.seed", 0x5d1a1_2025, "seed of the property tests; printed on failure")
	propCaseNo = flag.Int("schedule.case", -1, "run only this case number of the property tests (with -run naming the test and zone)")
)

// propZones are the zones the property runs in, chosen for their odd
// transitions.
var propZones = []string{
	"UTC",
	"America/New_York",    // 02:00 -> 03:00 in spring, 02:00 -> 01:00 in autumn
	"Europe/London",       // transitions at 01:00 UTC
	"Australia/Lord_Howe", // 30-minute DST
	"America/Santiago",    // transitions at midnight: 24:00 -> 01:00 and 24:00 -> 23:00
	"Asia/Kathmandu",      // +05:45, after a 15-minute jump in 1986
	"Pacific/Apia",        // skipped 2011-12-30 entirely
	"Pacific/Chatham",     // +12:45/+13:45, transitions at 02:45
	"America/St_Johns",    // -03:30, transitions at 00:01 until 2011, a 2-hour jump in 1988
	"Antarctica/Troll",    // a 2-hour DST jump
	"Africa/Casablanca",   // DST suspended for Ramadan: up to four transitions a year
}

// TestNextPrevProperties checks, in every zone of propZones, random
// expressions under random DST policies against the oracle: Next and Prev
// chains and Between over a window list exactly the oracle's fire times, and
// Next, Prev and their mirrors agree with it from random instants.
func TestNextPrevProperties(t *testing.T) {
	t.Parallel()
	cases := 320
	if testing.Short() {
		cases = 40
	}
	for zi, zone := range propZones {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatalf("zone %s: %v", zone, err)
			}
			transitions := propTransitions(loc)
			var accepted, rejected, fires, failed int
			var stats oracleStats
			for c := range cases {
				if *propCaseNo >= 0 && c != *propCaseNo {
					continue
				}
				// One generator per case, so a failing case can be rerun
				// alone with -schedule.case.
				r := rand.New(rand.NewPCG(*propSeed, uint64(zi)<<32|uint64(c)))
				pc := newPropCase(r, zone, loc, transitions)
				pc.caseNo = c
				s, err := Parse(pc.expr.text, pc.opts)
				if err != nil {
					rejected++
					continue
				}
				accepted++
				pc.pickWindow(r, s)
				n, ok := pc.check(t, r, s, &stats)
				fires += n
				if !ok {
					if failed++; failed >= 5 {
						t.Fatalf("giving up after %d failing cases", failed)
					}
				}
			}
			t.Logf("seed %#x: %d expressions accepted, %d rejected; %d fire times checked in %d windows, %d of them across a transition; %d gaps with a match, %d shifted; %d repeated wall times fired, %d not",
				*propSeed, accepted, rejected, fires, accepted, stats.windowsWithTransition, stats.gapsMatched, stats.gapShifts, stats.repeatsFired, stats.repeatsDropped)
			if *propCaseNo < 0 && rejected*4 > cases {
				t.Errorf("Parse rejected %d of %d generated expressions; the generator has drifted from the grammar", rejected, cases)
			}
		})
	}
}

// propCase is one expression in one zone, with a window to check it in.
type propCase struct {
	caseNo int
	zone   string
	loc    *time.Location
	expr   *oracleExpr
	opts   Options
	gap    Gap    // resolved, as the oracle understands the defaults
	repeat Repeat // resolved
	focus  int    // the year the expression and window are drawn around
	mode   int    // 0: around a transition; 1: a random instant; 2: a fire time
	anchor int64  // an instant the window contains
	from   int64  // the window, Unix seconds, inclusive
	to     int64
}

func newPropCase(r *rand.Rand, zone string, loc *time.Location, transitions []int64) *propCase {
	pc := &propCase{zone: zone, loc: loc}
	switch r.IntN(4) {
	case 0:
		pc.focus = 1971 + r.IntN(2198-1971)
	default:
		pc.focus = 1995 + r.IntN(50)
	}
	yearStart := time.Date(pc.focus, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	pc.anchor = yearStart + r.Int64N(365*86400)
	pc.mode = max(0, r.IntN(4)-1) // half of the windows contain a transition
	var hints propHints
	if pc.mode == 0 && len(transitions) > 0 {
		// Mostly transitions near the focus year; sometimes any. The
		// expression favours the wall times and dates around it, so
		// that gaps and repeats are hit often.
		i, _ := slices.BinarySearch(transitions, pc.anchor)
		i += r.IntN(5) - 2
		if r.IntN(4) == 0 {
			i = r.IntN(len(transitions))
		}
		pc.anchor = transitions[min(max(i, 0), len(transitions)-1)]
		pc.focus = time.Unix(pc.anchor, 0).In(loc).Year()
		for _, d := range []int64{-3601, -1801, -1, 0, 1800, 3600} {
			hints.add(time.Unix(pc.anchor+d, 0).In(loc))
		}
	}
	if r.IntN(3) == 0 {
		pc.opts.JobID = fmt.Sprintf("proj%d/job%d", r.IntN(100), r.IntN(1000))
	}
	pc.expr = genExpr(r, pc.opts.JobID, pc.focus, &hints)
	switch r.IntN(10) {
	case 0:
		pc.expr.text = "CRON_TZ=" + zone + " " + pc.expr.text
	case 1:
		pc.expr.text = "TZ=" + zone + " " + pc.expr.text
		pc.opts.Location = loc // naming the same zone twice is allowed
	default:
		pc.opts.Location = loc
	}
	pc.opts.Gap = []Gap{GapDefault, GapShift, GapSkip}[r.IntN(3)]
	pc.opts.Repeat = []Repeat{RepeatDefault, RepeatFirst, RepeatLast, RepeatBoth}[r.IntN(4)]
	pc.gap, pc.repeat = pc.opts.Gap, pc.opts.Repeat
	if pc.gap == GapDefault {
		pc.gap = GapShift
		if pc.expr.hourly {
			pc.gap = GapSkip
		}
	}
	if pc.repeat == RepeatDefault {
		pc.repeat = RepeatFirst
		if pc.expr.hourly {
			pc.repeat = RepeatBoth
		}
	}
	return pc
}

// pickWindow chooses the window around the anchor: a random instant, a DST
// transition of the zone, or (for mode 2) a fire time, so that sparse
// expressions still have something to check. Dense expressions get short
// windows so that the chains stay a few thousand fire times long.
func (pc *propCase) pickWindow(r *rand.Rand, s *Schedule) {
	perDay := pc.expr.timesPerDay()
	width := int64(3*3600 + r.IntN(47*3600))
	if limit := int64(4000) * 86400 / int64(perDay); width > limit {
		width = max(limit, 3600)
	}
	if pc.mode == 2 {
		if n, ok := s.Next(time.Unix(pc.anchor, 0)); ok && n.Year() <= 2199 {
			pc.anchor = n.Unix()
		}
	}
	pc.from = pc.anchor - r.Int64N(width)
	pc.to = pc.from + width
}

func (pc *propCase) describe() string {
	return fmt.Sprintf("seed=%#x zone=%s case=%d expr=%q jobID=%q gap=%v repeat=%v (resolved %v/%v) window=[%s, %s]\n"+
		"rerun: go test ./schedule -run 'TestNextPrevProperties/%s$' -schedule.seed=%#x -schedule.case=%d",
		*propSeed, pc.zone, pc.caseNo, pc.expr.text, pc.opts.JobID, pc.opts.Gap, pc.opts.Repeat, pc.gap, pc.repeat,
		propFmt(pc.from, pc.loc), propFmt(pc.to, pc.loc),
		pc.zone, *propSeed, pc.caseNo)
}

func propFmt(u int64, loc *time.Location) string {
	return time.Unix(u, 0).In(loc).Format("2006-01-02T15:04:05-07:00") + " (" + strconv.FormatInt(u, 10) + ")"
}

func propFmtTime(t time.Time, ok bool, loc *time.Location) string {
	if !ok {
		return "none"
	}
	s := propFmt(t.Unix(), loc)
	if t.Nanosecond() != 0 {
		s += fmt.Sprintf(" +%dns", t.Nanosecond())
	}
	return s
}

// check compares the schedule with the oracle over the window. It reports
// the first disagreement and returns how many fire times it checked.
func (pc *propCase) check(t *testing.T, r *rand.Rand, s *Schedule, stats *oracleStats) (int, bool) {
	t.Helper()
	fail := func(format string, args ...any) (int, bool) {
		t.Helper()
		t.Errorf("%s\n%s", fmt.Sprintf(format, args...), pc.describe())
		return 0, false
	}
	if s.Kind() != Cron {
		return fail("Kind() = %v, want cron", s.Kind())
	}
	if s.Gap() != pc.gap || s.Repeat() != pc.repeat {
		return fail("policy = %v/%v, want %v/%v", s.Gap(), s.Repeat(), pc.gap, pc.repeat)
	}
	if s.Location().String() != pc.loc.String() {
		return fail("Location() = %v, want %v", s.Location(), pc.loc)
	}
	want, err := oracleFires(pc.expr, pc.loc, pc.gap, pc.repeat, pc.from, pc.to, stats)
	if err != nil {
		return fail("oracle: %v", err)
	}
	// The oracle derived wall clocks from its own offset table; every fire
	// time must agree with what the time package says the wall clock was,
	// except a shifted gap time, which fires at the first instant after
	// the gap.
	for _, u := range want {
		w := time.Unix(u, 0).In(pc.loc)
		if !pc.expr.matchesTime(w) && !(pc.gap == GapShift && propOffset(pc.loc, u-1) < propOffset(pc.loc, u)) {
			return fail("oracle self-check: it fires at %s, which does not match and is not after a gap", propFmt(u, pc.loc))
		}
	}
	at := func(u int64) time.Time { return time.Unix(u, 0) }

	// Next from just before the window, then from each result, must list
	// exactly the oracle's fire times: each one matches, they increase, and
	// none is skipped.
	var got []int64
	n, ok := s.Next(at(pc.from - 1))
	for ok && n.Unix() <= pc.to {
		if n.Nanosecond() != 0 || n.Location().String() != pc.loc.String() {
			return fail("Next returned %v: want whole seconds in %v", n, pc.loc)
		}
		if len(got) > 0 && n.Unix() <= got[len(got)-1] {
			return fail("Next(%s) = %s: not after its input", propFmt(got[len(got)-1], pc.loc), propFmt(n.Unix(), pc.loc))
		}
		got = append(got, n.Unix())
		if len(got) > len(want)+1 {
			break
		}
		n, ok = s.Next(n)
	}
	if d := propDiff(got, want, pc.loc); d != "" {
		return fail("Next chain over the window differs from the oracle: %s", d)
	}

	// Prev from the end of the window, then from just before each result,
	// must list the same times backwards.
	got = got[:0]
	p, ok := s.Prev(at(pc.to))
	for ok && p.Unix() >= pc.from {
		got = append(got, p.Unix())
		if len(got) > len(want)+1 {
			break
		}
		p, ok = s.Prev(p.Add(-time.Second))
	}
	slices.Reverse(got)
	if d := propDiff(got, want, pc.loc); d != "" {
		return fail("Prev chain over the window differs from the oracle: %s", d)
	}

	got = got[:0]
	for b := range s.Between(at(pc.from), at(pc.to+1)) {
		got = append(got, b.Unix())
		if len(got) > len(want)+1 {
			break
		}
	}
	if d := propDiff(got, want, pc.loc); d != "" {
		return fail("Between over the window differs from the oracle: %s", d)
	}

	// Random instants, some of them between whole seconds.
	for range 24 {
		x := at(pc.from + r.Int64N(pc.to-pc.from+1))
		if r.IntN(2) == 0 {
			x = x.Add(time.Duration(1 + r.IntN(999_999_999)))
		}
		i, _ := slices.BinarySearch(want, x.Unix()+1) // first fire > x
		n, nok := s.Next(x)
		switch {
		case i < len(want):
			if !nok || n.Unix() != want[i] {
				return fail("Next(%s) = %s, want %s", propFmtTime(x, true, pc.loc), propFmtTime(n, nok, pc.loc), propFmt(want[i], pc.loc))
			}
		case nok && n.Unix() <= pc.to:
			return fail("Next(%s) = %s, want none in the window", propFmtTime(x, true, pc.loc), propFmtTime(n, nok, pc.loc))
		}
		p, pok := s.Prev(x)
		switch {
		case i > 0:
			if !pok || p.Unix() != want[i-1] || !p.Equal(at(want[i-1])) {
				return fail("Prev(%s) = %s, want %s", propFmtTime(x, true, pc.loc), propFmtTime(p, pok, pc.loc), propFmt(want[i-1], pc.loc))
			}
		case pok && p.Unix() >= pc.from:
			return fail("Prev(%s) = %s, want none in the window", propFmtTime(x, true, pc.loc), propFmtTime(p, pok, pc.loc))
		}
		// The mirror: Prev(Next(x)) is Next(x); Next(Prev(x)) is Next(x)
		// again, since nothing fires in (Prev(x), x]; and the fire time
		// before Next(x) is Prev(x).
		if nok {
			if pp, ok := s.Prev(n); !ok || !pp.Equal(n) {
				return fail("Prev(Next(%s)) = %s, want %s", propFmtTime(x, true, pc.loc), propFmtTime(pp, ok, pc.loc), propFmtTime(n, true, pc.loc))
			}
			if pp, ok := s.Prev(n.Add(-time.Nanosecond)); ok != pok || (ok && !pp.Equal(p)) {
				return fail("Prev(Next(%s) - 1ns) = %s, want Prev(x) = %s", propFmtTime(x, true, pc.loc), propFmtTime(pp, ok, pc.loc), propFmtTime(p, pok, pc.loc))
			}
		}
		if pok {
			if nn, ok := s.Next(p); ok != nok || (ok && !nn.Equal(n)) || (ok && !nn.After(x)) {
				return fail("Next(Prev(%s)) = %s, want Next(x) = %s", propFmtTime(x, true, pc.loc), propFmtTime(nn, ok, pc.loc), propFmtTime(n, nok, pc.loc))
			}
		}
	}
	return len(want), true
}

// propDiff describes the first difference between two lists of fire times.
func propDiff(got, want []int64, loc *time.Location) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("fire time #%d: got none, want %s (%d fire times in the window)", i, propFmt(want[i], loc), len(want))
		case i >= len(want):
			return fmt.Sprintf("fire time #%d: got %s, want none (%d fire times in the window)", i, propFmt(got[i], loc), len(want))
		case got[i] != want[i]:
			return fmt.Sprintf("fire time #%d: got %s, want %s", i, propFmt(got[i], loc), propFmt(want[i], loc))
		}
	}
	return ""
}

func propOffset(loc *time.Location, u int64) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

// propTransitions lists the instants in 1970-2199 at which the zone's UTC
// offset changes. It only picks interesting windows; the oracle does not
// use it.
func propTransitions(loc *time.Location) []int64 {
	var out []int64
	end := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	for u := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC); u.Before(end); {
		_, next := u.In(loc).ZoneBounds()
		if next.IsZero() {
			break
		}
		if !next.After(u) {
			next = u.Add(24 * time.Hour)
		}
		if propOffset(loc, next.Unix()) != propOffset(loc, next.Unix()-1) {
			out = append(out, next.Unix())
		}
		u = next
	}
	return out
}

// oracleExpr is a cron expression as the oracle understands it.
type oracleExpr struct {
	text   string
	words  []string // the cron fields of text; nil for a macro
	sec    [60]bool
	min    [60]bool
	hour   [24]bool
	month  [13]bool
	dom    [32]bool // plain days of month
	domL   []int    // L (0) and L-k (k): k days before the last day
	domLW  bool     // LW
	domW   []int    // kW
	dow    [7]bool  // plain weekdays, 0 = Sunday
	dowL   []int    // wL
	dowNth [][2]int // w#k
	dayAnd bool     // a day must match both fields: one starts with * or is ?
	years  []bool   // index year-1970; nil means every year
	hourly bool     // the hour field is * or has a step: the default policy is skip/both
}

func (e *oracleExpr) timesPerDay() int {
	count := func(set []bool) int {
		n := 0
		for _, b := range set {
			if b {
				n++
			}
		}
		return n
	}
	return max(1, count(e.sec[:])*count(e.min[:])*count(e.hour[:]))
}

// matchesTime reports whether the wall clock of t matches.
func (e *oracleExpr) matchesTime(t time.Time) bool {
	h, m, s := t.Clock()
	y, mo, d := t.Date()
	return e.sec[s] && e.min[m] && e.hour[h] && e.dayMatches(y, mo, d)
}

// dayMatches decides one calendar date from first principles.
func (e *oracleExpr) dayMatches(y int, m time.Month, d int) bool {
	if !e.month[m] {
		return false
	}
	if e.years != nil && (y < 1970 || y > 2199 || !e.years[y-1970]) {
		return false
	}
	n := time.Date(y, m+1, 0, 12, 0, 0, 0, time.UTC).Day() // the month's last day
	wd := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday()
	workday := func(d int) bool {
		wd := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday()
		return wd != time.Saturday && wd != time.Sunday
	}

	domOK := e.dom[d]
	for _, k := range e.domL {
		domOK = domOK || d == n-k
	}
	if e.domLW {
		last := n
		for !workday(last) {
			last--
		}
		domOK = domOK || d == last
	}
	for _, k := range e.domW {
		if k > n {
			continue // a month without day k has no weekday nearest to it
		}
		// The Monday-to-Friday day of this month closest to day k; there
		// is never a tie (a Saturday is 1 from Friday and 2 from Monday,
		// a Sunday the reverse).
		best := 0
		for c := 1; c <= n; c++ {
			if workday(c) && (best == 0 || propAbs(c-k) < propAbs(best-k)) {
				best = c
			}
		}
		domOK = domOK || d == best
	}

	dowOK := e.dow[wd]
	for _, w := range e.dowL {
		dowOK = dowOK || (int(wd) == w && d+7 > n)
	}
	for _, p := range e.dowNth {
		dowOK = dowOK || (int(wd) == p[0] && (d-1)/7+1 == p[1])
	}
	if e.dayAnd {
		return domOK && dowOK
	}
	return domOK || dowOK
}

func propAbs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// oracleFires returns every instant in [from, to] at which e fires in loc
// under the given policy, deciding each second on its own:
//
//   - an instant fires when its wall clock matches, unless that wall time
//     also happens at another instant (the clocks fell back) and the repeat
//     policy wants another copy;
//   - the first instant after the clocks jumped forward also fires, under
//     GapShift, when a wall time that was jumped over matches.
func oracleFires(e *oracleExpr, loc *time.Location, gap Gap, rep Repeat, from, to int64, stats *oracleStats) ([]int64, error) {
	// Wall times repeat, or are jumped over, by at most a day (Apia, 2011).
	const margin = 26 * 3600
	offs, err := newOracleOffsets(loc, from-margin, to+margin)
	if err != nil {
		return nil, err
	}
	days := map[int64]bool{}
	match := func(w int64) bool {
		day := w / 86400
		if w%86400 < 0 {
			day--
		}
		sod := w - day*86400
		if !e.sec[sod%60] || !e.min[sod/60%60] || !e.hour[sod/3600] {
			return false
		}
		ok, seen := days[day]
		if !seen {
			ok = e.dayMatches(time.Unix(day*86400, 0).UTC().Date())
			days[day] = ok
		}
		return ok
	}
	var out []int64
	prevOff := offs.at(from - 1)
	for _, start := range offs.starts[1:] {
		if start >= from && start <= to {
			stats.windowsWithTransition++
			break
		}
	}
	for u := from; u <= to; u++ {
		off := offs.at(u)
		w := u + off
		fire := false
		if match(w) {
			// All instants with this wall clock.
			first, last := u, u
			for _, o := range offs.distinct {
				if v := w - o; v != u && offs.at(v) == o {
					first, last = min(first, v), max(last, v)
				}
			}
			switch rep {
			case RepeatFirst:
				fire = u == first
			case RepeatLast:
				fire = u == last
			case RepeatBoth:
				fire = true
			}
			if first != last {
				if fire {
					stats.repeatsFired++
				} else {
					stats.repeatsDropped++
				}
			}
		}
		if off > prevOff {
			// The wall clock jumped from u-1+prevOff to w: the times
			// strictly between never happened.
			for g := u + prevOff; g < w; g++ {
				if match(g) {
					stats.gapsMatched++
					if gap == GapShift && !fire {
						fire = true
						stats.gapShifts++
					}
					break
				}
			}
		}
		if fire {
			out = append(out, u)
		}
		prevOff = off
	}
	return out, nil
}

// oracleStats counts what the oracle saw, to show that the DST rules were
// exercised at all.
type oracleStats struct {
	windowsWithTransition        int
	gapsMatched, gapShifts       int
	repeatsFired, repeatsDropped int
}

// oracleOffsets is a zone's UTC offset over a stretch of time, found by
// sampling time.Time.Zone and bisecting where it changes.
type oracleOffsets struct {
	loc      *time.Location
	starts   []int64 // starts[i] is where offs[i] begins
	end      int64   // offs[len(offs)-1] is known to last until here
	offs     []int64
	distinct []int64
	cur      int
}

func newOracleOffsets(loc *time.Location, from, to int64) (*oracleOffsets, error) {
	z := &oracleOffsets{loc: loc, starts: []int64{from}, end: to, offs: []int64{propOffset(loc, from)}}
	// Real zones never change their offset twice within half an hour; if
	// one did, the bisection below would notice and say so.
	const step = 1800
	for a := from; a < to; a += step {
		b := min(a+step, to)
		oa, ob := z.offs[len(z.offs)-1], propOffset(loc, b)
		if oa == ob {
			continue
		}
		lo, hi := a, b // offset oa at lo, something else at hi
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if propOffset(loc, mid) == oa {
				lo = mid
			} else {
				hi = mid
			}
		}
		if propOffset(loc, hi) != ob {
			return nil, fmt.Errorf("zone %s changes offset twice in [%d, %d]", loc, a, b)
		}
		z.starts = append(z.starts, hi)
		z.offs = append(z.offs, ob)
	}
	for _, o := range z.offs {
		if !slices.Contains(z.distinct, o) {
			z.distinct = append(z.distinct, o)
		}
	}
	return z, nil
}

// at returns the offset at u; it is fastest when u only moves forward.
func (z *oracleOffsets) at(u int64) int64 {
	if u < z.starts[0] || u > z.end {
		return propOffset(z.loc, u)
	}
	if u < z.starts[z.cur] || (z.cur+1 < len(z.starts) && u >= z.starts[z.cur+1]) {
		z.cur, _ = slices.BinarySearch(z.starts, u+1)
		z.cur--
	}
	return z.offs[z.cur]
}

// Generation. Each field is a list of items; every item records the values
// it stands for, so the oracle never reads the text back.

type propField struct {
	hash   int // the field's number in the frozen hash: second 0 ... day of week 5
	lo, hi int // values the text may name
	top    int // where *, a/n and H end: 6 for day of week, whose 7 is only an alias
	names  []string
	pool   []int // values worth favouring (DST hours, ends of ranges)
}

var (
	propSecond = propField{hash: 0, lo: 0, hi: 59, top: 59, pool: []int{0, 0, 0, 30, 59, 1, 15, 45}}
	propMinute = propField{hash: 1, lo: 0, hi: 59, top: 59, pool: []int{0, 0, 30, 45, 59, 1, 15, 29, 31}}
	propHour   = propField{hash: 2, lo: 0, hi: 23, top: 23, pool: []int{0, 1, 2, 3, 23, 22, 4, 12}}
	propDom    = propField{hash: 3, lo: 1, hi: 31, top: 31, pool: []int{1, 2, 3, 15, 28, 29, 30, 31}}
	propMonth  = propField{hash: 4, lo: 1, hi: 12, top: 12, pool: []int{1, 2, 3, 4, 9, 10, 11, 12},
		names: []string{"", "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}}
	propDow = propField{hash: 5, lo: 0, hi: 7, top: 6, pool: []int{0, 1, 5, 6, 7},
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}}
)

// propHints are field values worth favouring in one case: the wall times
// and dates around the DST transition its window contains.
type propHints [6][]int

func (h *propHints) add(t time.Time) {
	_, m, d := t.Date()
	h[0] = append(h[0], t.Second())
	h[1] = append(h[1], t.Minute())
	h[2] = append(h[2], t.Hour())
	h[3] = append(h[3], d)
	h[4] = append(h[4], int(m))
	h[5] = append(h[5], int(t.Weekday()))
}

// field returns f with the hinted values added to its pool, three times
// over so that they are picked about half the time.
func (h *propHints) field(f propField) propField {
	vs := h[f.hash]
	if len(vs) == 0 {
		return f
	}
	pool := slices.Clone(f.pool)
	for range 3 {
		pool = append(pool, vs...)
	}
	f.pool = pool
	return f
}

// propHash is hashValue, reimplemented: it is documented as frozen, so the
// copy here also pins it.
func propHash(jobID string, field int) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(jobID); i++ {
		h ^= uint64(jobID[i])
		h *= 1099511628211
	}
	h ^= uint64(field) + 1
	h *= 1099511628211
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func (f propField) pick(r *rand.Rand) int {
	if r.IntN(2) == 0 {
		return f.pool[r.IntN(len(f.pool))]
	}
	return f.lo + r.IntN(f.hi-f.lo+1)
}

func (f propField) text(r *rand.Rand, v int) string {
	if v < len(f.names) && f.names[v] != "" && r.IntN(3) == 0 {
		switch name := f.names[v]; r.IntN(3) {
		case 0:
			return strings.ToLower(name)
		case 1:
			return name[:1] + strings.ToLower(name[1:])
		default:
			return name
		}
	}
	return strconv.Itoa(v)
}

func (f propField) step(r *rand.Rand, max int) int {
	if r.IntN(4) == 0 {
		return 1 + r.IntN(max)
	}
	return 1 + r.IntN(min(max, 6))
}

func propSpan(lo, hi, step int) []int {
	var vs []int
	for v := lo; v <= hi; v += step {
		vs = append(vs, v)
	}
	return vs
}

// item returns one element of a plain field and the values it stands for.
func (f propField) item(r *rand.Rand, jobID string) (string, []int) {
	if jobID != "" && r.IntN(3) == 0 {
		return f.hashItem(r, jobID)
	}
	switch r.IntN(12) {
	case 0:
		return "*", propSpan(f.lo, f.top, 1)
	case 1, 2:
		s := f.step(r, f.top-f.lo)
		return "*/" + strconv.Itoa(s), propSpan(f.lo, f.top, s)
	case 3, 4:
		a, b := f.pick(r), f.pick(r)
		a, b = min(a, b), max(a, b)
		return f.text(r, a) + "-" + f.text(r, b), propSpan(a, b, 1)
	case 5:
		a, b := f.pick(r), f.pick(r)
		a, b = min(a, b), max(a, b)
		s := f.step(r, f.top-f.lo)
		return f.text(r, a) + "-" + f.text(r, b) + "/" + strconv.Itoa(s), propSpan(a, b, s)
	case 6:
		// a/n runs from a to the end of the field; a 7 in the day of week
		// is Sunday, so 7/n is Sunday alone.
		a := f.pick(r)
		s := f.step(r, f.top-f.lo)
		return f.text(r, a) + "/" + strconv.Itoa(s), propSpan(a, max(f.top, a), s)
	default:
		v := f.pick(r)
		return f.text(r, v), []int{v}
	}
}

// hashItem returns an H element: H, H(a-b), H/n or H(a-b)/n, with the values
// the documented hash gives it.
func (f propField) hashItem(r *rand.Rand, jobID string) (string, []int) {
	h := propHash(jobID, f.hash)
	lo, hi := f.lo, f.top
	text := "H"
	ranged := r.IntN(2) == 0
	if ranged {
		lo, hi = f.pick(r), f.pick(r)
		lo, hi = min(lo, hi), max(lo, hi)
		text = fmt.Sprintf("H(%s-%s)", f.text(r, lo), f.text(r, hi))
	}
	if r.IntN(2) == 0 {
		// H/n picks a start in the first n values of the range. Its step
		// may go up to the field's full width (7 for the day of week).
		s := f.step(r, f.hi-f.lo)
		start := lo + int(h%uint64(min(s, hi-lo+1)))
		return text + "/" + strconv.Itoa(s), propSpan(start, hi, s)
	}
	if !ranged && f.hash == 3 {
		hi = 28 // a plain H day of month exists in every month
	}
	v := lo + int(h%uint64(hi-lo+1))
	return text, []int{v}
}

// list returns a comma-separated field of one to three items.
func (f propField) list(r *rand.Rand, jobID string, special func() (string, bool)) (string, []int) {
	n := 1
	if k := r.IntN(10); k >= 7 {
		n = k - 5
	}
	var texts []string
	var vals []int
	for range n {
		if special != nil && r.IntN(3) == 0 {
			if text, ok := special(); ok {
				texts = append(texts, text)
				continue
			}
		}
		text, vs := f.item(r, jobID)
		texts = append(texts, text)
		vals = append(vals, vs...)
	}
	return strings.Join(texts, ","), vals
}

// genExpr generates a random expression: 5, 6 or 7 fields, or a macro.
func genExpr(r *rand.Rand, jobID string, focus int, hints *propHints) *oracleExpr {
	e := &oracleExpr{}
	propSecond, propMinute, propHour := hints.field(propSecond), hints.field(propMinute), hints.field(propHour)
	propDom, propMonth, propDow := hints.field(propDom), hints.field(propMonth), hints.field(propDow)
	if r.IntN(25) == 0 {
		return genMacro(r)
	}
	// Aimed at a transition, the date fields are mostly unrestricted so
	// that the gap or the repeated hour usually falls on a matching day.
	wild := 5
	if len(hints[2]) > 0 {
		wild = 8
	}
	var words []string
	set := func(dst []bool, vals []int) {
		for _, v := range vals {
			dst[v] = true
		}
	}
	nf := []int{5, 5, 5, 6, 6, 7}[r.IntN(6)]
	if nf == 5 {
		e.sec[0] = true
	} else {
		// A single second keeps most six-field schedules sparse enough
		// for long windows.
		v := propSecond.pick(r)
		text, vals := strconv.Itoa(v), []int{v}
		if r.IntN(2) == 0 {
			text, vals = propSecond.list(r, jobID, nil)
		}
		set(e.sec[:], vals)
		words = append(words, text)
	}
	text, vals := propMinute.list(r, jobID, nil)
	set(e.min[:], vals)
	words = append(words, text)

	if r.IntN(4) == 0 {
		text, vals = "*", propSpan(0, 23, 1)
	} else {
		text, vals = propHour.list(r, jobID, nil)
	}
	set(e.hour[:], vals)
	e.hourly = text == "*" || strings.Contains(text, "/")
	words = append(words, text)

	// Day of month.
	var domText string
	switch k := r.IntN(10); {
	case k < wild-1:
		domText = "*"
		set(e.dom[:], propSpan(1, 31, 1))
	case k < wild:
		domText = "?"
		set(e.dom[:], propSpan(1, 31, 1))
	default:
		domText, vals = propDom.list(r, jobID, func() (string, bool) {
			switch r.IntN(4) {
			case 0:
				e.domL = append(e.domL, 0)
				return "L", true
			case 1:
				k := 1 + r.IntN(3)
				if r.IntN(4) == 0 {
					k = 1 + r.IntN(30)
				}
				e.domL = append(e.domL, k)
				return "L-" + strconv.Itoa(k), true
			case 2:
				e.domLW = true
				return "LW", true
			default:
				k := []int{1, 2, 15, 28, 29, 30, 31, 1 + r.IntN(31)}[r.IntN(8)]
				e.domW = append(e.domW, k)
				return strconv.Itoa(k) + "W", true
			}
		})
		set(e.dom[:], vals)
	}
	words = append(words, domText)

	if r.IntN(10) < wild {
		text, vals = "*", propSpan(1, 12, 1)
	} else {
		text, vals = propMonth.list(r, jobID, nil)
	}
	set(e.month[:], vals)
	words = append(words, text)

	// Day of week.
	var dowText string
	switch k := r.IntN(10); {
	case k < wild-1:
		dowText = "*"
		set(e.dow[:], propSpan(0, 6, 1))
	case k < wild:
		dowText = "?"
		set(e.dow[:], propSpan(0, 6, 1))
	default:
		dowText, vals = propDow.list(r, jobID, func() (string, bool) {
			w := r.IntN(8)
			if r.IntN(2) == 0 {
				k := 1 + r.IntN(5)
				e.dowNth = append(e.dowNth, [2]int{w % 7, k})
				return propDow.text(r, w) + "#" + strconv.Itoa(k), true
			}
			e.dowL = append(e.dowL, w%7)
			return propDow.text(r, w) + "L", true
		})
		for _, v := range vals {
			e.dow[v%7] = true // 7 is Sunday too
		}
	}
	words = append(words, dowText)
	star := func(text string) bool { return strings.HasPrefix(text, "*") || text == "?" }
	e.dayAnd = star(domText) || star(dowText)

	if nf == 7 {
		year := propField{lo: 1970, hi: 2199, top: 2199, pool: []int{focus - 1, focus, focus, focus, focus + 1, focus + 2, 1970, 2199}}
		for i, v := range year.pool {
			year.pool[i] = min(max(v, 1970), 2199)
		}
		if r.IntN(4) == 0 {
			words = append(words, "*")
		} else {
			text, vals := year.list(r, "", nil)
			e.years = make([]bool, 2199-1970+1)
			for _, v := range vals {
				e.years[v-1970] = true
			}
			words = append(words, text)
		}
	}
	e.text = strings.Join(words, " ")
	e.words = words
	return e
}

func genMacro(r *rand.Rand) *oracleExpr {
	e := &oracleExpr{dayAnd: true}
	e.sec[0], e.min[0], e.hour[0] = true, true, true
	for d := range e.dom {
		e.dom[d] = d > 0
	}
	for m := range e.month {
		e.month[m] = m > 0
	}
	for w := range e.dow {
		e.dow[w] = true
	}
	names := []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
	e.text = names[r.IntN(len(names))]
	switch e.text {
	case "@yearly", "@annually":
		e.dom = [32]bool{1: true}
		e.month = [13]bool{1: true}
	case "@monthly":
		e.dom = [32]bool{1: true}
	case "@weekly":
		e.dow = [7]bool{0: true}
	case "@hourly":
		for h := range e.hour {
			e.hour[h] = true
		}
		e.hourly = true
	}
	if r.IntN(4) == 0 {
		e.text = strings.ToUpper(e.text)
	}
	return e
}

// TestDayRulesProperty checks the day rules (L, L-n, LW, nW, nL, w#k, the
// day-of-month/day-of-week combination, months, years) over years rather
// than hours: the rare dates they hinge on (1W on a Saturday, a fifth
// Monday that is the month's last day) seldom fall in the short windows of
// TestNextPrevProperties. With one fixed time of day, away from DST
// transitions, the oracle may decide whole days: the schedule fires once
// on each matching date at that time.
func TestDayRulesProperty(t *testing.T) {
	t.Parallel()
	cases := 3000
	if testing.Short() {
		cases = 150
	}
	for zi, zone := range []string{"UTC", "America/New_York"} {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatalf("zone %s: %v", zone, err)
			}
			var accepted, rejected, fires, failed int
			for c := range cases {
				if *propCaseNo >= 0 && c != *propCaseNo {
					continue
				}
				r := rand.New(rand.NewPCG(*propSeed, 1<<40|uint64(zi)<<32|uint64(c)))
				focus := 1971 + r.IntN(2190-1971)
				if r.IntN(2) == 0 {
					focus = 1995 + r.IntN(50)
				}
				var jobID string
				if r.IntN(3) == 0 {
					jobID = fmt.Sprintf("proj%d/job%d", r.IntN(100), r.IntN(1000))
				}
				e := genExpr(r, jobID, focus, &propHints{})
				for e.words == nil {
					e = genExpr(r, jobID, focus, &propHints{})
				}
				// One time of day; noon in New York is never near a
				// transition.
				h, m, sec := r.IntN(24), r.IntN(60), r.IntN(60)
				if zone != "UTC" {
					h = 12
				}
				e.sec, e.min, e.hour = [60]bool{}, [60]bool{}, [24]bool{}
				e.sec[sec], e.min[m], e.hour[h] = true, true, true
				words := slices.Clone(e.words)
				if len(words) == 5 {
					e.sec = [60]bool{0: true}
					sec = 0
					words[0], words[1] = strconv.Itoa(m), strconv.Itoa(h)
				} else {
					words[0], words[1], words[2] = strconv.Itoa(sec), strconv.Itoa(m), strconv.Itoa(h)
				}
				e.text = strings.Join(words, " ")
				s, err := Parse(e.text, Options{JobID: jobID, Location: loc})
				if err != nil {
					rejected++
					continue
				}
				accepted++

				first := time.Date(focus, time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, loc)
				last := first.AddDate(1+r.IntN(6), 0, 0)
				var want []int64
				for d := first; d.Before(last); d = d.AddDate(0, 0, 1) {
					if y, mo, dd := d.Date(); e.dayMatches(y, mo, dd) {
						want = append(want, time.Date(y, mo, dd, h, m, sec, 0, loc).Unix())
					}
				}
				var got []int64
				for n, ok := s.Next(first.Add(-time.Second)); ok && n.Before(last) && len(got) <= len(want); n, ok = s.Next(n) {
					got = append(got, n.Unix())
				}
				diff := propDiff(got, want, loc)
				if diff == "" {
					got = got[:0]
					for p, ok := s.Prev(last.Add(-time.Second)); ok && !p.Before(first) && len(got) <= len(want); p, ok = s.Prev(p.Add(-time.Second)) {
						got = append(got, p.Unix())
					}
					slices.Reverse(got)
					if diff = propDiff(got, want, loc); diff != "" {
						diff = "Prev chain: " + diff
					}
				} else {
					diff = "Next chain: " + diff
				}
				if diff != "" {
					t.Errorf("%s\nseed=%#x zone=%s case=%d expr=%q jobID=%q dates=[%s, %s)\nrerun: go test ./schedule -run 'TestDayRulesProperty/%s$' -schedule.seed=%#x -schedule.case=%d",
						diff, *propSeed, zone, c, e.text, jobID, first.Format(time.DateOnly), last.Format(time.DateOnly), zone, *propSeed, c)
					if failed++; failed >= 5 {
						t.Fatalf("giving up after %d failing cases", failed)
					}
				}
				fires += len(want)
			}
			t.Logf("seed %#x: %d expressions accepted, %d rejected; %d fire times checked", *propSeed, accepted, rejected, fires)
			if *propCaseNo < 0 && rejected*4 > cases {
				t.Errorf("Parse rejected %d of %d generated expressions; the generator has drifted from the grammar", rejected, cases)
			}
		})
	}
}

// TestOracleKnownAnswers pins the oracle to answers worked out by hand, so
// that it cannot drift into agreeing with the package for the wrong reason;
// the package must give the same answers.
func TestOracleKnownAnswers(t *testing.T) {
	t.Parallel()
	at := func(h, m, s int, edit ...func(e *oracleExpr)) *oracleExpr {
		e := &oracleExpr{}
		e.sec[s], e.min[m], e.hour[h] = true, true, true
		for d := 1; d <= 31; d++ {
			e.dom[d] = true
		}
		for mo := 1; mo <= 12; mo++ {
			e.month[mo] = true
		}
		for w := range e.dow {
			e.dow[w] = true
		}
		e.dayAnd = true
		for _, f := range edit {
			f(e)
		}
		return e
	}
	onlyDom := func(e *oracleExpr) { e.dom = [32]bool{} } // the day-of-month field lists only specials
	onlyDow := func(e *oracleExpr) { e.dow = [7]bool{} }
	for _, tc := range []struct {
		name     string
		expr     string
		oracle   *oracleExpr
		zone     string
		gap      Gap
		repeat   Repeat
		from, to string
		want     []string
	}{
		{"New York 02:30 shifted to 03:00 on the spring-forward day", "0 30 2 * * *", at(2, 30, 0), "America/New_York", GapShift, RepeatFirst,
			"2024-03-10T05:00:00Z", "2024-03-10T10:00:00Z", []string{"2024-03-10T07:00:00Z"}},
		{"New York 02:30 skipped on the spring-forward day", "0 30 2 * * *", at(2, 30, 0), "America/New_York", GapSkip, RepeatFirst,
			"2024-03-10T05:00:00Z", "2024-03-10T10:00:00Z", nil},
		{"New York 01:30 first copy", "0 30 1 * * *", at(1, 30, 0), "America/New_York", GapShift, RepeatFirst,
			"2024-11-03T04:00:00Z", "2024-11-03T08:00:00Z", []string{"2024-11-03T05:30:00Z"}},
		{"New York 01:30 last copy", "0 30 1 * * *", at(1, 30, 0), "America/New_York", GapShift, RepeatLast,
			"2024-11-03T04:00:00Z", "2024-11-03T08:00:00Z", []string{"2024-11-03T06:30:00Z"}},
		{"New York 01:30 both copies", "0 30 1 * * *", at(1, 30, 0), "America/New_York", GapShift, RepeatBoth,
			"2024-11-03T04:00:00Z", "2024-11-03T08:00:00Z", []string{"2024-11-03T05:30:00Z", "2024-11-03T06:30:00Z"}},
		{"Santiago midnight shifted to 01:00 when DST starts at midnight", "0 0 0 * * *", at(0, 0, 0), "America/Santiago", GapShift, RepeatFirst,
			"2024-09-08T00:00:00Z", "2024-09-08T12:00:00Z", []string{"2024-09-08T04:00:00Z"}},
		{"Santiago midnight skipped when DST starts at midnight", "0 0 0 * * *", at(0, 0, 0), "America/Santiago", GapSkip, RepeatFirst,
			"2024-09-08T00:00:00Z", "2024-09-08T12:00:00Z", nil},
		{"Santiago 23:30 last copy when DST ends at midnight", "0 30 23 * * *", at(23, 30, 0), "America/Santiago", GapShift, RepeatLast,
			"2024-04-07T00:00:00Z", "2024-04-07T12:00:00Z", []string{"2024-04-07T03:30:00Z"}},
		{"Apia noon on the skipped 2011-12-30 fires at the transition", "0 0 12 * * *", at(12, 0, 0), "Pacific/Apia", GapShift, RepeatFirst,
			"2011-12-29T20:00:00Z", "2011-12-31T00:00:00Z", []string{"2011-12-29T22:00:00Z", "2011-12-30T10:00:00Z", "2011-12-30T22:00:00Z"}},
		{"Apia noon on the skipped 2011-12-30 is skipped", "0 0 12 * * *", at(12, 0, 0), "Pacific/Apia", GapSkip, RepeatFirst,
			"2011-12-29T20:00:00Z", "2011-12-31T00:00:00Z", []string{"2011-12-29T22:00:00Z", "2011-12-30T22:00:00Z"}},
		{"Lord Howe 01:45 both copies of the repeated half hour", "0 45 1 * * *", at(1, 45, 0), "Australia/Lord_Howe", GapShift, RepeatBoth,
			"2024-04-06T12:00:00Z", "2024-04-06T18:00:00Z", []string{"2024-04-06T14:45:00Z", "2024-04-06T15:15:00Z"}},
		{"1W on Saturday the 1st is Monday the 3rd", "0 0 1W * *", at(0, 0, 0, onlyDom, func(e *oracleExpr) { e.domW = []int{1} }), "UTC", GapShift, RepeatFirst,
			"2022-01-01T00:00:00Z", "2022-01-31T00:00:00Z", []string{"2022-01-03T00:00:00Z"}},
		{"31W on Sunday the 31st is Friday the 29th", "0 0 31W * *", at(0, 0, 0, onlyDom, func(e *oracleExpr) { e.domW = []int{31} }), "UTC", GapShift, RepeatFirst,
			"2022-06-01T00:00:00Z", "2022-08-01T00:00:00Z", []string{"2022-07-29T00:00:00Z"}},
		{"LW when the month ends on a Sunday", "0 0 LW * *", at(0, 0, 0, onlyDom, func(e *oracleExpr) { e.domLW = true }), "UTC", GapShift, RepeatFirst,
			"2023-04-01T00:00:00Z", "2023-04-30T23:00:00Z", []string{"2023-04-28T00:00:00Z"}},
		{"L-2 in a leap February", "0 0 L-2 * *", at(0, 0, 0, onlyDom, func(e *oracleExpr) { e.domL = []int{2} }), "UTC", GapShift, RepeatFirst,
			"2024-02-01T00:00:00Z", "2024-02-29T23:00:00Z", []string{"2024-02-27T00:00:00Z"}},
		{"the fifth Friday", "0 0 ? * 5#5", at(0, 0, 0, onlyDow, func(e *oracleExpr) { e.dowNth = [][2]int{{5, 5}} }), "UTC", GapShift, RepeatFirst,
			"2023-11-01T00:00:00Z", "2024-01-31T00:00:00Z", []string{"2023-12-29T00:00:00Z"}},
		{"the last Monday", "0 0 ? * 1L", at(0, 0, 0, onlyDow, func(e *oracleExpr) { e.dowL = []int{1} }), "UTC", GapShift, RepeatFirst,
			"2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", []string{"2024-01-29T00:00:00Z"}},
		{"13th or Friday when both fields are restricted", "0 0 13 * FRI", at(0, 0, 0, func(e *oracleExpr) {
			e.dom, e.dow, e.dayAnd = [32]bool{13: true}, [7]bool{5: true}, false
		}), "UTC", GapShift, RepeatFirst,
			"2023-02-01T00:00:00Z", "2023-02-28T00:00:00Z", []string{"2023-02-03T00:00:00Z", "2023-02-10T00:00:00Z", "2023-02-13T00:00:00Z", "2023-02-17T00:00:00Z", "2023-02-24T00:00:00Z"}},
		{"*/2 and Monday when the day of month starts with *", "0 0 */2 * MON", at(0, 0, 0, func(e *oracleExpr) {
			e.dom = [32]bool{}
			for d := 1; d <= 31; d += 2 {
				e.dom[d] = true
			}
			e.dow = [7]bool{1: true}
		}), "UTC", GapShift, RepeatFirst,
			"2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", []string{"2024-01-01T00:00:00Z", "2024-01-15T00:00:00Z", "2024-01-29T00:00:00Z"}},
		{"31W in a 30-day month never fires", "0 0 31W * *", at(0, 0, 0, onlyDom, func(e *oracleExpr) { e.domW = []int{31} }), "UTC", GapShift, RepeatFirst,
			"2022-06-01T00:00:00Z", "2022-06-30T23:00:00Z", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc, err := time.LoadLocation(tc.zone)
			if err != nil {
				t.Fatal(err)
			}
			parse := func(s string) int64 {
				u, err := time.Parse(time.RFC3339, s)
				if err != nil {
					t.Fatal(err)
				}
				return u.Unix()
			}
			var want []int64
			for _, w := range tc.want {
				want = append(want, parse(w))
			}
			from, to := parse(tc.from), parse(tc.to)
			got, err := oracleFires(tc.oracle, loc, tc.gap, tc.repeat, from, to, &oracleStats{})
			if err != nil {
				t.Fatal(err)
			}
			if d := propDiff(got, want, loc); d != "" {
				t.Errorf("oracle: %s", d)
			}
			s, err := Parse(tc.expr, Options{Location: loc, Gap: tc.gap, Repeat: tc.repeat})
			if err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for n, ok := s.Next(time.Unix(from-1, 0)); ok && n.Unix() <= to; n, ok = s.Next(n) {
				got = append(got, n.Unix())
			}
			if d := propDiff(got, want, loc); d != "" {
				t.Errorf("Parse(%q).Next: %s", tc.expr, d)
			}
		})
	}
}

// TestPropertyRegressions pins the bugs the property tests found, each as
// the fire times that follow an instant.
func TestPropertyRegressions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		expr string
		zone string
		from string
		want []string
	}{
		// parseField took a year field starting with * to mean every year.
		{"year */2 counts from 1970 instead of matching every year", "0 0 0 1 1 * */2", "UTC",
			"2026-06-01T00:00:00Z", []string{"2028-01-01T00:00:00Z", "2030-01-01T00:00:00Z"}},
		{"year list starting with */3 names its years", "0 0 0 1 1 * */3,2030", "UTC",
			"2025-06-01T00:00:00Z", []string{"2027-01-01T00:00:00Z", "2030-01-01T00:00:00Z", "2033-01-01T00:00:00Z"}},
		// 7/n ran from 7 to 6 and matched nothing: "0 12 * * 7/2" was
		// refused as never firing, "0 12 1 * 7/3" fired on the 1st only.
		{"day of week 7/2 is Sunday", "0 12 * * 7/2", "UTC",
			"2025-01-01T00:00:00Z", []string{"2025-01-05T12:00:00Z", "2025-01-12T12:00:00Z"}},
		{"day of week 7/3 is Sunday, or the 1st", "0 12 1 * 7/3", "UTC",
			"2025-01-01T13:00:00Z", []string{"2025-01-05T12:00:00Z", "2025-01-12T12:00:00Z"}},
		// nextAfter started its search after a fire time at the last
		// instant before a gap and never looked into that gap.
		{"GapShift still fires at the transition right after a fire time", "59 59 0,1 * * *", "Europe/London",
			"2025-03-30T00:59:58Z", []string{"2025-03-30T00:59:59Z", "2025-03-30T01:00:00Z", "2025-03-30T23:59:59Z"}},
		{"GapShift on Chatham's 02:45 transition", "59 * 2 * * *", "Pacific/Chatham",
			"2025-09-27T13:58:00Z", []string{"2025-09-27T13:58:59Z", "2025-09-27T13:59:59Z", "2025-09-27T14:00:00Z", "2025-09-28T12:15:59Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc, err := time.LoadLocation(tc.zone)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(tc.expr, Options{Location: loc})
			if err != nil {
				t.Fatal(err)
			}
			from, err := time.Parse(time.RFC3339, tc.from)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for n, ok := s.Next(from); ok && len(got) < len(tc.want); n, ok = s.Next(n) {
				got = append(got, n.UTC().Format(time.RFC3339))
				// Prev mirrors each fire time.
				if p, ok := s.Prev(n); !ok || !p.Equal(n) {
					t.Errorf("Prev(%v) = %v, %v; want itself", n, p, ok)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Parse(%q) in %s: Next from %s = %v, want %v", tc.expr, tc.zone, tc.from, got, tc.want)
			}
		})
	}
}
