package schedule

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// walkedGap is the shortest gap of s over span from its first fire time
// after from, found by walking every fire time: what ShortestGap must not
// exceed. ok is false if the walk passed limit fire times.
func walkedGap(s *Schedule, from time.Time, span time.Duration, limit int) (gap time.Duration, found, ok bool) {
	prev, more := s.Next(from)
	if !more {
		return 0, false, true
	}
	end := prev.Add(span)
	for range limit {
		next, more := s.Next(prev)
		if !more || next.After(end) {
			return gap, found, true
		}
		if g := next.Sub(prev); !found || g < gap {
			gap, found = g, true
		}
		prev = next
	}
	return 0, false, false
}

// TestShortestGapProperty checks ShortestGap against a walk over every
// fire time, for the property test's random expressions and DST policies
// in its zones, over spans that start near a transition: it is never
// longer than the walked gap, and equal to it unless it names a
// wall-clock gap that the span has only across an offset change (a day of
// 24 hours that was 25 there) or cuts off at its start.
func TestShortestGapProperty(t *testing.T) {
	t.Parallel()
	cases := 200
	if testing.Short() {
		cases = 50
	}
	for zi, zone := range propZones {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			transitions := propTransitions(loc)
			var checked, equal int
			for c := range cases {
				r := rand.New(rand.NewPCG(*propSeed^0x6a9, uint64(zi)<<32|uint64(c)))
				pc := newPropCase(r, zone, loc, transitions)
				pc.caseNo = c
				s, err := Parse(pc.expr.text, pc.opts)
				if err != nil {
					continue
				}
				span := time.Duration(1+r.IntN(60)) * 24 * time.Hour
				from := time.Unix(pc.anchor-r.Int64N(int64(span/time.Second)), 0)
				want, wantFound, ok := walkedGap(s, from, span, 50_000)
				if !ok {
					continue
				}
				checked++
				got, found := s.ShortestGap(from, span)
				switch {
				case found != wantFound && !found:
					t.Errorf("%s\nShortestGap from %s over %s: none; the walk found %s", pc.describe(), from, span, want)
				case found && wantFound && got > want:
					t.Errorf("%s\nShortestGap from %s over %s: %s; the walk found %s", pc.describe(), from, span, got, want)
				case found == wantFound && got == want:
					equal++
				}
			}
			t.Logf("%d expressions checked, %d with the walk's answer exactly", checked, equal)
			if equal*10 < checked*9 {
				t.Errorf("only %d of %d answers are the walk's: the wall-clock gaps are wrong more often than across an offset change", equal, checked)
			}
		})
	}
}

// TestShortestGapWorkIsBoundedPerSchedule: however often a schedule fires,
// its shortest gap over a year costs one fire time to start from and nine
// around each change of UTC offset (the walk it replaces computed up to
// 20,000 fire times a job: an every-2-seconds schedule cost 2.7 ms).
func TestShortestGapWorkIsBoundedPerSchedule(t *testing.T) {
	t.Parallel()
	from, year := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 366*24*time.Hour
	for _, tc := range []struct {
		expr, zone string
		want       time.Duration
		changes    int
	}{
		{"H/2 * * * * *", "UTC", 2 * time.Second, 0},
		{"H/2 * * * * *", "America/New_York", 2 * time.Second, 2},
		{"* * * * * *", "Africa/Casablanca", time.Second, 2},
		{"0 1,59 2,3 * * *", "America/New_York", time.Minute, 2}, // shifted out of the gap onto 03:00, a minute before 03:01
		{"30 1 * * *", "America/New_York", 23 * time.Hour, 2},    // the day the clocks spring forward
		{"0 0 29 2 *", "UTC", 0, 0},                              // once in the span: no gap
		{"@yearly", "Europe/London", 365 * 24 * time.Hour, 2},
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(tc.expr, Options{JobID: "p/j", Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		var evaluated int
		gap, found := s.shortestGap(from, year, &evaluated)
		if gap != tc.want || found != (tc.want > 0) {
			t.Errorf("%s in %s: %s, %v; want %s", tc.expr, tc.zone, gap, found, tc.want)
		}
		if limit := 1 + 9*tc.changes; evaluated > limit {
			t.Errorf("%s in %s: %d fire times computed; want at most %d", tc.expr, tc.zone, evaluated, limit)
		}
	}
	// The jobs of issue 36's finding 8: 10,000 of them took 27 s.
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	var evaluated int
	for i := range 10_000 {
		s, err := Parse("H/2 * * * * *", Options{JobID: fmt.Sprintf("p/j%d", i), Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		if gap, _ := s.shortestGap(from, year, &evaluated); gap != 2*time.Second {
			t.Fatalf("job %d: %s; want 2s", i, gap)
		}
	}
	if evaluated > 10_000*19 {
		t.Errorf("10,000 jobs: %d fire times computed; want at most 19 each (the walk computed 20,000 each)", evaluated)
	}
}
