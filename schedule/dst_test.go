package schedule_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
)

// The transitions these tables cross, from the tz database (zdump -v):
//
//	America/New_York     2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z)
//	Europe/London        2026-03-29 01:00 GMT -> 02:00 BST (01:00Z); 2026-10-25 02:00 BST -> 01:00 GMT (01:00Z)
//	Australia/Lord_Howe  2026-10-04 02:00 +1030 -> 02:30 +11 (Oct 3 15:30Z); 2026-04-05 02:00 +11 -> 01:30 +1030 (Apr 4 15:00Z)
//	America/Santiago     2026-09-06 00:00 -04 -> 01:00 -03 (04:00Z); 2026-04-05 00:00 -03 -> Apr 4 23:00 -04 (03:00Z)
//	America/Havana       2026-03-08 00:00 CST -> 01:00 CDT (05:00Z); 2026-11-01 01:00 CDT -> 00:00 CST (05:00Z)
//	Asia/Kathmandu       +05:45 all year
//
// Every case runs under all seven policies: the default and each of
// gap {skip, shift} x repeat {first, last, both}. On a spring-forward day
// only the gap policy matters and on a fall-back day only the repeat policy,
// which the tables say by giving the fire times per gap or per repeat.

// dstCase is a window of fire times around one transition.
type dstCase struct {
	name string
	zone string
	expr string
	from string
	// The default policy this expression resolves to.
	defaultGap    schedule.Gap
	defaultRepeat schedule.Repeat
	// Around a spring-forward gap: the fire times under each gap policy,
	// the same under every repeat policy. Nil when the case is a fall-back.
	skip, shift []string
	// Around a fall-back repeat: the fire times under each repeat policy,
	// the same under every gap policy. Nil when the case is a spring-forward.
	first, last, both []string
	// Neither a gap nor a repeat touches the schedule: the same fire times
	// under every policy.
	all []string
}

// want returns the fire times of the case under gap g and repeat r (both
// resolved).
func (c dstCase) want(g schedule.Gap, r schedule.Repeat) []string {
	switch {
	case c.all != nil:
		return c.all
	case c.skip != nil && g == schedule.GapSkip:
		return c.skip
	case c.skip != nil:
		return c.shift
	case r == schedule.RepeatFirst:
		return c.first
	case r == schedule.RepeatLast:
		return c.last
	}
	return c.both
}

var dstPolicies = []struct {
	gap    schedule.Gap
	repeat schedule.Repeat
}{
	{schedule.GapDefault, schedule.RepeatDefault},
	{schedule.GapSkip, schedule.RepeatFirst},
	{schedule.GapSkip, schedule.RepeatLast},
	{schedule.GapSkip, schedule.RepeatBoth},
	{schedule.GapShift, schedule.RepeatFirst},
	{schedule.GapShift, schedule.RepeatLast},
	{schedule.GapShift, schedule.RepeatBoth},
}

func runDSTCases(t *testing.T, cases []dstCase) {
	t.Helper()
	for _, tc := range cases {
		for _, p := range dstPolicies {
			t.Run(fmt.Sprintf("%s/gap=%s,repeat=%s", tc.name, p.gap, p.repeat), func(t *testing.T) {
				t.Parallel()
				s := parseForTest(t, tc.expr, schedule.Options{Location: mustZone(t, tc.zone), Gap: p.gap, Repeat: p.repeat})
				g, r := p.gap, p.repeat
				if g == schedule.GapDefault {
					g = tc.defaultGap
				}
				if r == schedule.RepeatDefault {
					r = tc.defaultRepeat
				}
				if s.Gap() != g || s.Repeat() != r {
					t.Fatalf("Gap(), Repeat() = %s, %s; want %s, %s", s.Gap(), s.Repeat(), g, r)
				}
				want := tc.want(g, r)
				got, more := nextChain(s, mustInstant(t, tc.from), len(want))
				if !equalStrings(got, want) {
					t.Errorf("%q in %s after %s:\n got  %q\n want %q", tc.expr, tc.zone, tc.from, got, want)
				}
				if !more {
					t.Errorf("Next after %s has no answer", want[len(want)-1])
				}
				checkPrevMirrorsNext(t, s, want)
			})
		}
	}
}

func TestDSTNewYork(t *testing.T) {
	t.Parallel()
	const zone = "America/New_York"
	daily := func(c dstCase) dstCase {
		c.zone, c.defaultGap, c.defaultRepeat = zone, schedule.GapShift, schedule.RepeatFirst
		return c
	}
	hourly := func(c dstCase) dstCase {
		c.zone, c.defaultGap, c.defaultRepeat = zone, schedule.GapSkip, schedule.RepeatBoth
		return c
	}
	runDSTCases(t, []dstCase{
		daily(dstCase{name: "02:30 does not exist on spring-forward day", expr: "30 2 * * *", from: "2026-03-07T00:00:00-05:00",
			skip:  []string{"2026-03-07T02:30:00-05:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"},
			shift: []string{"2026-03-07T02:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}}),
		daily(dstCase{name: "02:30 happens once on fall-back day", expr: "30 2 * * *", from: "2026-10-31T00:00:00-04:00",
			all: []string{"2026-10-31T02:30:00-04:00", "2026-11-01T02:30:00-05:00", "2026-11-02T02:30:00-05:00"}}),
		daily(dstCase{name: "01:30 happens once on spring-forward day", expr: "30 1 * * *", from: "2026-03-07T00:00:00-05:00",
			all: []string{"2026-03-07T01:30:00-05:00", "2026-03-08T01:30:00-05:00", "2026-03-09T01:30:00-04:00"}}),
		daily(dstCase{name: "01:30 happens twice on fall-back day", expr: "30 1 * * *", from: "2026-10-31T00:00:00-04:00",
			first: []string{"2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"},
			last:  []string{"2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"},
			both:  []string{"2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}}),
		hourly(dstCase{name: "every 15 minutes across the gap: a shift lands on 03:00, which fires anyway", expr: "*/15 * * * *", from: "2026-03-08T01:00:00-05:00",
			skip: []string{"2026-03-08T01:15:00-05:00", "2026-03-08T01:30:00-05:00", "2026-03-08T01:45:00-05:00",
				"2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"},
			shift: []string{"2026-03-08T01:15:00-05:00", "2026-03-08T01:30:00-05:00", "2026-03-08T01:45:00-05:00",
				"2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"}}),
		hourly(dstCase{name: "every 15 minutes through the repeated hour", expr: "*/15 * * * *", from: "2026-11-01T00:30:00-04:00",
			first: []string{"2026-11-01T00:45:00-04:00",
				"2026-11-01T01:00:00-04:00", "2026-11-01T01:15:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T01:45:00-04:00",
				"2026-11-01T02:00:00-05:00", "2026-11-01T02:15:00-05:00"},
			last: []string{"2026-11-01T00:45:00-04:00",
				"2026-11-01T01:00:00-05:00", "2026-11-01T01:15:00-05:00", "2026-11-01T01:30:00-05:00", "2026-11-01T01:45:00-05:00",
				"2026-11-01T02:00:00-05:00"},
			both: []string{"2026-11-01T00:45:00-04:00",
				"2026-11-01T01:00:00-04:00", "2026-11-01T01:15:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T01:45:00-04:00",
				"2026-11-01T01:00:00-05:00", "2026-11-01T01:15:00-05:00", "2026-11-01T01:30:00-05:00", "2026-11-01T01:45:00-05:00",
				"2026-11-01T02:00:00-05:00"}}),
		hourly(dstCase{name: "every hour on the hour across the gap", expr: "0 * * * *", from: "2026-03-08T00:00:00-05:00",
			skip:  []string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"},
			shift: []string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"}}),
		hourly(dstCase{name: "every hour on the hour through the repeated hour", expr: "0 * * * *", from: "2026-11-01T00:00:00-04:00",
			first: []string{"2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00"},
			last:  []string{"2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00"},
			both:  []string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00"}}),
		hourly(dstCase{name: "every hour at :30 across the gap: a shift fires 02:30 at 03:00", expr: "30 * * * *", from: "2026-03-08T00:00:00-05:00",
			skip:  []string{"2026-03-08T00:30:00-05:00", "2026-03-08T01:30:00-05:00", "2026-03-08T03:30:00-04:00", "2026-03-08T04:30:00-04:00"},
			shift: []string{"2026-03-08T00:30:00-05:00", "2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00", "2026-03-08T04:30:00-04:00"}}),
		hourly(dstCase{name: "second 30 of every minute across the gap", expr: "30 * * * * *", from: "2026-03-08T01:58:00-05:00",
			skip:  []string{"2026-03-08T01:58:30-05:00", "2026-03-08T01:59:30-05:00", "2026-03-08T03:00:30-04:00", "2026-03-08T03:01:30-04:00"},
			shift: []string{"2026-03-08T01:58:30-05:00", "2026-03-08T01:59:30-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:00:30-04:00", "2026-03-08T03:01:30-04:00"}}),
		hourly(dstCase{name: "second 30 of every minute into the repeated hour", expr: "30 * * * * *", from: "2026-11-01T01:58:00-04:00",
			first: []string{"2026-11-01T01:58:30-04:00", "2026-11-01T01:59:30-04:00", "2026-11-01T02:00:30-05:00", "2026-11-01T02:01:30-05:00"},
			last:  []string{"2026-11-01T01:00:30-05:00", "2026-11-01T01:01:30-05:00", "2026-11-01T01:02:30-05:00"},
			both:  []string{"2026-11-01T01:58:30-04:00", "2026-11-01T01:59:30-04:00", "2026-11-01T01:00:30-05:00", "2026-11-01T01:01:30-05:00"}}),
		hourly(dstCase{name: "second 30 of every minute out of the repeated hour", expr: "30 * * * * *", from: "2026-11-01T01:58:00-05:00",
			first: []string{"2026-11-01T02:00:30-05:00", "2026-11-01T02:01:30-05:00"},
			last:  []string{"2026-11-01T01:58:30-05:00", "2026-11-01T01:59:30-05:00", "2026-11-01T02:00:30-05:00"},
			both:  []string{"2026-11-01T01:58:30-05:00", "2026-11-01T01:59:30-05:00", "2026-11-01T02:00:30-05:00"}}),
	})
}

func TestDSTLondon(t *testing.T) {
	t.Parallel()
	const zone = "Europe/London"
	runDSTCases(t, []dstCase{
		{name: "01:30 does not exist on spring-forward day", zone: zone, expr: "30 1 * * *", from: "2026-03-28T00:00:00Z",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			skip:  []string{"2026-03-28T01:30:00Z", "2026-03-30T01:30:00+01:00"},
			shift: []string{"2026-03-28T01:30:00Z", "2026-03-29T02:00:00+01:00", "2026-03-30T01:30:00+01:00"}},
		{name: "01:30 happens twice on fall-back day", zone: zone, expr: "30 1 * * *", from: "2026-10-24T00:00:00+01:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			first: []string{"2026-10-24T01:30:00+01:00", "2026-10-25T01:30:00+01:00", "2026-10-26T01:30:00Z"},
			last:  []string{"2026-10-24T01:30:00+01:00", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"},
			both:  []string{"2026-10-24T01:30:00+01:00", "2026-10-25T01:30:00+01:00", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"}},
		{name: "every hour across the gap", zone: zone, expr: "0 * * * *", from: "2026-03-29T00:00:00Z",
			defaultGap: schedule.GapSkip, defaultRepeat: schedule.RepeatBoth,
			skip:  []string{"2026-03-29T02:00:00+01:00", "2026-03-29T03:00:00+01:00"},
			shift: []string{"2026-03-29T02:00:00+01:00", "2026-03-29T03:00:00+01:00"}},
		{name: "every hour through the repeated hour", zone: zone, expr: "0 * * * *", from: "2026-10-25T00:00:00+01:00",
			defaultGap: schedule.GapSkip, defaultRepeat: schedule.RepeatBoth,
			first: []string{"2026-10-25T01:00:00+01:00", "2026-10-25T02:00:00Z"},
			last:  []string{"2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"},
			both:  []string{"2026-10-25T01:00:00+01:00", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
	})
}

// Lord Howe Island moves its clocks by 30 minutes, so only half of an hour
// is skipped or repeated.
func TestDSTLordHowe(t *testing.T) {
	t.Parallel()
	const zone = "Australia/Lord_Howe"
	runDSTCases(t, []dstCase{
		{name: "02:15 is in the half-hour gap", zone: zone, expr: "15 2 * * *", from: "2026-10-03T00:00:00+10:30",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			skip:  []string{"2026-10-03T02:15:00+10:30", "2026-10-05T02:15:00+11:00"},
			shift: []string{"2026-10-03T02:15:00+10:30", "2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{name: "02:45 is after the half-hour gap", zone: zone, expr: "45 2 * * *", from: "2026-10-03T00:00:00+10:30",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			all: []string{"2026-10-03T02:45:00+10:30", "2026-10-04T02:45:00+11:00", "2026-10-05T02:45:00+11:00"}},
		{name: "every 20 minutes across the half-hour gap", zone: zone, expr: "*/20 * * * *", from: "2026-10-04T01:30:00+10:30",
			defaultGap: schedule.GapSkip, defaultRepeat: schedule.RepeatBoth,
			skip:  []string{"2026-10-04T01:40:00+10:30", "2026-10-04T02:40:00+11:00", "2026-10-04T03:00:00+11:00"},
			shift: []string{"2026-10-04T01:40:00+10:30", "2026-10-04T02:30:00+11:00", "2026-10-04T02:40:00+11:00", "2026-10-04T03:00:00+11:00"}},
		{name: "01:45 is in the repeated half hour", zone: zone, expr: "45 1 * * *", from: "2026-04-04T00:00:00+11:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			first: []string{"2026-04-04T01:45:00+11:00", "2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"},
			last:  []string{"2026-04-04T01:45:00+11:00", "2026-04-05T01:45:00+10:30", "2026-04-06T01:45:00+10:30"},
			both:  []string{"2026-04-04T01:45:00+11:00", "2026-04-05T01:45:00+11:00", "2026-04-05T01:45:00+10:30", "2026-04-06T01:45:00+10:30"}},
		{name: "01:15 is before the repeated half hour", zone: zone, expr: "15 1 * * *", from: "2026-04-04T00:00:00+11:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			all: []string{"2026-04-04T01:15:00+11:00", "2026-04-05T01:15:00+11:00", "2026-04-06T01:15:00+10:30"}},
		{name: "every 15 minutes through the repeated half hour", zone: zone, expr: "*/15 * * * *", from: "2026-04-05T01:00:00+11:00",
			defaultGap: schedule.GapSkip, defaultRepeat: schedule.RepeatBoth,
			first: []string{"2026-04-05T01:15:00+11:00", "2026-04-05T01:30:00+11:00", "2026-04-05T01:45:00+11:00", "2026-04-05T02:00:00+10:30"},
			last:  []string{"2026-04-05T01:15:00+11:00", "2026-04-05T01:30:00+10:30", "2026-04-05T01:45:00+10:30", "2026-04-05T02:00:00+10:30"},
			both: []string{"2026-04-05T01:15:00+11:00", "2026-04-05T01:30:00+11:00", "2026-04-05T01:45:00+11:00",
				"2026-04-05T01:30:00+10:30", "2026-04-05T01:45:00+10:30", "2026-04-05T02:00:00+10:30"}},
	})
}

// Santiago and Havana change their clocks at midnight, so the gap or the
// repeat is at the start of a day (or, falling back in Santiago, at the end
// of the day before).
func TestDSTMidnight(t *testing.T) {
	t.Parallel()
	runDSTCases(t, []dstCase{
		{name: "Santiago: midnight does not exist on 6 September", zone: "America/Santiago", expr: "0 0 * * *", from: "2026-09-04T12:00:00-04:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			skip:  []string{"2026-09-05T00:00:00-04:00", "2026-09-07T00:00:00-03:00"},
			shift: []string{"2026-09-05T00:00:00-04:00", "2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"}},
		{name: "Santiago: midnight on the 6th does not exist in September", zone: "America/Santiago", expr: "0 0 6 * *", from: "2026-08-01T00:00:00-04:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			skip:  []string{"2026-08-06T00:00:00-04:00", "2026-10-06T00:00:00-03:00"},
			shift: []string{"2026-08-06T00:00:00-04:00", "2026-09-06T01:00:00-03:00", "2026-10-06T00:00:00-03:00"}},
		{name: "Santiago: 23:30 happens twice on 4 April", zone: "America/Santiago", expr: "30 23 * * *", from: "2026-04-03T12:00:00-03:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			first: []string{"2026-04-03T23:30:00-03:00", "2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"},
			last:  []string{"2026-04-03T23:30:00-03:00", "2026-04-04T23:30:00-04:00", "2026-04-05T23:30:00-04:00"},
			both:  []string{"2026-04-03T23:30:00-03:00", "2026-04-04T23:30:00-03:00", "2026-04-04T23:30:00-04:00", "2026-04-05T23:30:00-04:00"}},
		{name: "Santiago: midnight after the repeated hour happens once", zone: "America/Santiago", expr: "@daily", from: "2026-04-03T12:00:00-03:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			all: []string{"2026-04-04T00:00:00-03:00", "2026-04-05T00:00:00-04:00", "2026-04-06T00:00:00-04:00"}},
		{name: "Havana: midnight does not exist on 8 March", zone: "America/Havana", expr: "0 0 * * *", from: "2026-03-06T12:00:00-05:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			skip:  []string{"2026-03-07T00:00:00-05:00", "2026-03-09T00:00:00-04:00"},
			shift: []string{"2026-03-07T00:00:00-05:00", "2026-03-08T01:00:00-04:00", "2026-03-09T00:00:00-04:00"}},
		{name: "Havana: midnight happens twice on 1 November", zone: "America/Havana", expr: "0 0 * * *", from: "2026-10-31T12:00:00-04:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			first: []string{"2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00"},
			last:  []string{"2026-11-01T00:00:00-05:00", "2026-11-02T00:00:00-05:00"},
			both:  []string{"2026-11-01T00:00:00-04:00", "2026-11-01T00:00:00-05:00", "2026-11-02T00:00:00-05:00"}},
		{name: "Havana: Sunday midnight on a Sunday that starts twice", zone: "America/Havana", expr: "0 0 * * SUN", from: "2026-10-24T12:00:00-04:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			first: []string{"2026-10-25T00:00:00-04:00", "2026-11-01T00:00:00-04:00", "2026-11-08T00:00:00-05:00"},
			last:  []string{"2026-10-25T00:00:00-04:00", "2026-11-01T00:00:00-05:00", "2026-11-08T00:00:00-05:00"},
			both:  []string{"2026-10-25T00:00:00-04:00", "2026-11-01T00:00:00-04:00", "2026-11-01T00:00:00-05:00", "2026-11-08T00:00:00-05:00"}},
	})
}

func TestDSTNoTransitions(t *testing.T) {
	t.Parallel()
	runDSTCases(t, []dstCase{
		{name: "Kathmandu midnight is 18:15 UTC the day before", zone: "Asia/Kathmandu", expr: "0 0 * * *", from: "2026-01-01T00:00:00Z",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			all: []string{"2026-01-02T00:00:00+05:45", "2026-01-03T00:00:00+05:45", "2026-01-04T00:00:00+05:45"}},
		{name: "Kathmandu every 15 minutes", zone: "Asia/Kathmandu", expr: "*/15 * * * *", from: "2026-01-01T18:10:00Z",
			defaultGap: schedule.GapSkip, defaultRepeat: schedule.RepeatBoth,
			all: []string{"2026-01-02T00:00:00+05:45", "2026-01-02T00:15:00+05:45"}},
		{name: "UTC across New York's spring forward", zone: "UTC", expr: "30 2 * * *", from: "2026-03-07T12:00:00Z",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			all: []string{"2026-03-08T02:30:00Z", "2026-03-09T02:30:00Z"}},
	})
}

// Next and Prev from instants inside a gap's aftermath or a repeated hour.
func TestDSTFromInsideTheWindow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		zone   string
		expr   string
		gap    schedule.Gap
		repeat schedule.Repeat
		at     string
		next   string
		prev   string
	}{
		{name: "first: from the second 01:10, the next 01:30 is tomorrow", zone: "America/New_York", expr: "30 1 * * *", repeat: schedule.RepeatFirst,
			at: "2026-11-01T01:10:00-05:00", next: "2026-11-02T01:30:00-05:00", prev: "2026-11-01T01:30:00-04:00"},
		{name: "last: from the second 01:10, the next 01:30 is the second one", zone: "America/New_York", expr: "30 1 * * *", repeat: schedule.RepeatLast,
			at: "2026-11-01T01:10:00-05:00", next: "2026-11-01T01:30:00-05:00", prev: "2026-10-31T01:30:00-04:00"},
		{name: "last: from the first 01:40, the second 01:30 is still to come", zone: "America/New_York", expr: "30 1 * * *", repeat: schedule.RepeatLast,
			at: "2026-11-01T01:40:00-04:00", next: "2026-11-01T01:30:00-05:00", prev: "2026-10-31T01:30:00-04:00"},
		{name: "last: from the second 01:45, the last 01:30 is behind", zone: "America/New_York", expr: "30 1 * * *", repeat: schedule.RepeatLast,
			at: "2026-11-01T01:45:00-05:00", next: "2026-11-02T01:30:00-05:00", prev: "2026-11-01T01:30:00-05:00"},
		{name: "both: from the second 01:10", zone: "America/New_York", expr: "30 1 * * *", repeat: schedule.RepeatBoth,
			at: "2026-11-01T01:10:00-05:00", next: "2026-11-01T01:30:00-05:00", prev: "2026-11-01T01:30:00-04:00"},
		{name: "first: every 15 minutes from the second 01:50", zone: "America/New_York", expr: "*/15 * * * *", repeat: schedule.RepeatFirst,
			at: "2026-11-01T01:50:00-05:00", next: "2026-11-01T02:00:00-05:00", prev: "2026-11-01T01:45:00-04:00"},
		{name: "first: every 15 minutes from the second 01:10", zone: "America/New_York", expr: "*/15 * * * *", repeat: schedule.RepeatFirst,
			at: "2026-11-01T01:10:00-05:00", next: "2026-11-01T02:00:00-05:00", prev: "2026-11-01T01:45:00-04:00"},
		{name: "shift: 03:10 after the gap looks back to the shifted 02:30", zone: "America/New_York", expr: "30 2 * * *", gap: schedule.GapShift,
			at: "2026-03-08T03:10:00-04:00", next: "2026-03-09T02:30:00-04:00", prev: "2026-03-08T03:00:00-04:00"},
		{name: "skip: 03:10 after the gap looks back to yesterday", zone: "America/New_York", expr: "30 2 * * *", gap: schedule.GapSkip,
			at: "2026-03-08T03:10:00-04:00", next: "2026-03-09T02:30:00-04:00", prev: "2026-03-07T02:30:00-05:00"},
		{name: "shift: 01:59:59 before the gap", zone: "America/New_York", expr: "30 2 * * *", gap: schedule.GapShift,
			at: "2026-03-08T01:59:59-05:00", next: "2026-03-08T03:00:00-04:00", prev: "2026-03-07T02:30:00-05:00"},
		{name: "shift: hourly at :30 from 03:10", zone: "America/New_York", expr: "30 * * * *", gap: schedule.GapShift,
			at: "2026-03-08T03:10:00-04:00", next: "2026-03-08T03:30:00-04:00", prev: "2026-03-08T03:00:00-04:00"},
		{name: "skip: hourly at :30 from 03:10", zone: "America/New_York", expr: "30 * * * *", gap: schedule.GapSkip,
			at: "2026-03-08T03:10:00-04:00", next: "2026-03-08T03:30:00-04:00", prev: "2026-03-08T01:30:00-05:00"},
		{name: "shift: a shifted fire is its own Prev", zone: "Australia/Lord_Howe", expr: "15 2 * * *", gap: schedule.GapShift,
			at: "2026-10-04T02:30:00+11:00", next: "2026-10-05T02:15:00+11:00", prev: "2026-10-04T02:30:00+11:00"},
		{name: "last: Lord Howe from the first 01:50", zone: "Australia/Lord_Howe", expr: "45 1 * * *", repeat: schedule.RepeatLast,
			at: "2026-04-05T01:50:00+11:00", next: "2026-04-05T01:45:00+10:30", prev: "2026-04-04T01:45:00+11:00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parseForTest(t, tc.expr, schedule.Options{Location: mustZone(t, tc.zone), Gap: tc.gap, Repeat: tc.repeat})
			at := mustInstant(t, tc.at)
			if got, ok := s.Next(at); !ok || got.Format(time.RFC3339) != tc.next {
				t.Errorf("Next(%s) = %s, %v; want %s", tc.at, got.Format(time.RFC3339), ok, tc.next)
			}
			if got, ok := s.Prev(at); !ok || got.Format(time.RFC3339) != tc.prev {
				t.Errorf("Prev(%s) = %s, %v; want %s", tc.at, got.Format(time.RFC3339), ok, tc.prev)
			}
		})
	}
}

// Gap and Repeat report the policy in force: an explicit one as given, the
// default resolved from the hour field (* or a step: skip and both; anything
// else: shift and first).
func TestDSTPolicyDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		expr       string
		gap        schedule.Gap
		repeat     schedule.Repeat
		wantGap    schedule.Gap
		wantRepeat schedule.Repeat
	}{
		{name: "a fixed hour", expr: "30 2 * * *", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "hour star", expr: "*/15 * * * *", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "hour star with minute 0", expr: "0 * * * *", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "hour step", expr: "0 */2 * * *", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "hour range with a step", expr: "0 1-23/2 * * *", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "hour range", expr: "0 9-17 * * *", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "hour range covering the day is still a list of fixed hours", expr: "0 0-23 * * *", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "hour list", expr: "0 1,13 * * *", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "@hourly", expr: "@hourly", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "@daily", expr: "@daily", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "@weekly", expr: "@weekly", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "six fields: the hour is the third field", expr: "30 * * * * *", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "six fields: 2 is the minute, the hour is star", expr: "30 2 * * * *", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "six fields: a fixed hour", expr: "0 30 2 * * *", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "seven fields: a fixed hour", expr: "0 30 2 * * * 2027", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "a hashed hour is a fixed hour", expr: "H H * * *", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "a hashed hour step", expr: "H H/4 * * *", wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "a time zone prefix does not change the default", expr: "CRON_TZ=America/New_York 30 2 * * *", wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "explicit shift and first win over hour star", expr: "*/15 * * * *", gap: schedule.GapShift, repeat: schedule.RepeatFirst,
			wantGap: schedule.GapShift, wantRepeat: schedule.RepeatFirst},
		{name: "explicit skip and both win over a fixed hour", expr: "30 2 * * *", gap: schedule.GapSkip, repeat: schedule.RepeatBoth,
			wantGap: schedule.GapSkip, wantRepeat: schedule.RepeatBoth},
		{name: "explicit last alone keeps the default gap", expr: "30 2 * * *", repeat: schedule.RepeatLast,
			wantGap: schedule.GapShift, wantRepeat: schedule.RepeatLast},
		{name: "explicit shift alone keeps the default repeat", expr: "*/15 * * * *", gap: schedule.GapShift,
			wantGap: schedule.GapShift, wantRepeat: schedule.RepeatBoth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parseForTest(t, tc.expr, schedule.Options{JobID: "proj/job", Gap: tc.gap, Repeat: tc.repeat})
			if s.Gap() != tc.wantGap || s.Repeat() != tc.wantRepeat {
				t.Errorf("%q: Gap(), Repeat() = %s, %s; want %s, %s", tc.expr, s.Gap(), s.Repeat(), tc.wantGap, tc.wantRepeat)
			}
		})
	}
}

// Beyond the transitions the tz database lists, the time package computes
// them from the zone's rule; period boundaries then fall at every new year
// (a day early in leap years), which the search must see through.
func TestDSTFarFuture(t *testing.T) {
	t.Parallel()
	const ny = "America/New_York"
	runDSTCases(t, []dstCase{
		{name: "New York 2040 (a leap year): 02:30 on 11 March", zone: ny, expr: "30 2 * * *", from: "2040-03-10T00:00:00-05:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			skip:  []string{"2040-03-10T02:30:00-05:00", "2040-03-12T02:30:00-04:00"},
			shift: []string{"2040-03-10T02:30:00-05:00", "2040-03-11T03:00:00-04:00", "2040-03-12T02:30:00-04:00"}},
		{name: "New York 2100: 01:30 on 7 November", zone: ny, expr: "30 1 * * *", from: "2100-11-06T00:00:00-04:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			first: []string{"2100-11-06T01:30:00-04:00", "2100-11-07T01:30:00-04:00", "2100-11-08T01:30:00-05:00"},
			last:  []string{"2100-11-06T01:30:00-04:00", "2100-11-07T01:30:00-05:00", "2100-11-08T01:30:00-05:00"},
			both:  []string{"2100-11-06T01:30:00-04:00", "2100-11-07T01:30:00-04:00", "2100-11-07T01:30:00-05:00", "2100-11-08T01:30:00-05:00"}},
		{name: "New York 2199: 02:30 on 10 March", zone: ny, expr: "30 2 * * *", from: "2199-03-09T00:00:00-05:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			skip:  []string{"2199-03-09T02:30:00-05:00", "2199-03-11T02:30:00-04:00"},
			shift: []string{"2199-03-09T02:30:00-05:00", "2199-03-10T03:00:00-04:00", "2199-03-11T02:30:00-04:00"}},
		{name: "New York: into the leap year 2040", zone: ny, expr: "*/30 * * * *", from: "2039-12-31T23:00:00-05:00",
			defaultGap: schedule.GapSkip, defaultRepeat: schedule.RepeatBoth,
			all: []string{"2039-12-31T23:30:00-05:00", "2040-01-01T00:00:00-05:00", "2040-01-01T00:30:00-05:00"}},
		{name: "New York: out of the leap year 2040", zone: ny, expr: "*/30 * * * *", from: "2040-12-30T23:00:00-05:00",
			defaultGap: schedule.GapSkip, defaultRepeat: schedule.RepeatBoth,
			all: []string{"2040-12-30T23:30:00-05:00", "2040-12-31T00:00:00-05:00"}},
		{name: "New York: the last day of the leap year 2040", zone: ny, expr: "0 12 31 12 *", from: "2040-12-01T00:00:00-05:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			all: []string{"2040-12-31T12:00:00-05:00", "2041-12-31T12:00:00-05:00"}},
		{name: "New York: New Year 2100", zone: ny, expr: "0 0 1 1 *", from: "2099-12-31T00:00:00-05:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			all: []string{"2100-01-01T00:00:00-05:00", "2101-01-01T00:00:00-05:00"}},
		{name: "London 2096 (a leap year): 01:30 on 28 October", zone: "Europe/London", expr: "30 1 * * *", from: "2096-10-27T00:00:00+01:00",
			defaultGap: schedule.GapShift, defaultRepeat: schedule.RepeatFirst,
			first: []string{"2096-10-27T01:30:00+01:00", "2096-10-28T01:30:00+01:00", "2096-10-29T01:30:00Z"},
			last:  []string{"2096-10-27T01:30:00+01:00", "2096-10-28T01:30:00Z", "2096-10-29T01:30:00Z"},
			both:  []string{"2096-10-27T01:30:00+01:00", "2096-10-28T01:30:00+01:00", "2096-10-28T01:30:00Z", "2096-10-29T01:30:00Z"}},
	})
}

// A schedule whose only wall-clock time falls in a gap or a repeat: what the
// policy decides is all there is, and Next and Prev end there.
func TestDSTOnlyFireTimeInAGapOrRepeat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		expr   string
		gap    schedule.Gap
		repeat schedule.Repeat
		want   []string // every fire time there is
	}{
		{name: "skip: 02:30 on 8 March 2026 never happens", expr: "0 30 2 8 3 * 2026", gap: schedule.GapSkip, want: nil},
		{name: "shift: 02:30 on 8 March 2026 fires at 03:00", expr: "0 30 2 8 3 * 2026", gap: schedule.GapShift,
			want: []string{"2026-03-08T03:00:00-04:00"}},
		{name: "first: 01:30 on 1 November 2026", expr: "0 30 1 1 11 * 2026", repeat: schedule.RepeatFirst,
			want: []string{"2026-11-01T01:30:00-04:00"}},
		{name: "last: 01:30 on 1 November 2026", expr: "0 30 1 1 11 * 2026", repeat: schedule.RepeatLast,
			want: []string{"2026-11-01T01:30:00-05:00"}},
		{name: "both: 01:30 on 1 November 2026", expr: "0 30 1 1 11 * 2026", repeat: schedule.RepeatBoth,
			want: []string{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := parseForTest(t, tc.expr, schedule.Options{Location: mustZone(t, "America/New_York"), Gap: tc.gap, Repeat: tc.repeat})
			got, more := nextChain(s, mustInstant(t, "2026-01-01T00:00:00Z"), len(tc.want)+1)
			if !equalStrings(got, tc.want) || more {
				t.Errorf("fire times %q (more: %v), want %q and no more", got, more, tc.want)
			}
			last, ok := s.Prev(mustInstant(t, "2027-06-01T00:00:00Z"))
			switch {
			case len(tc.want) == 0 && ok:
				t.Errorf("Prev(2027) = %s, want none", last.Format(time.RFC3339))
			case len(tc.want) > 0 && (!ok || last.Format(time.RFC3339) != tc.want[len(tc.want)-1]):
				t.Errorf("Prev(2027) = %s, %v; want %s", last.Format(time.RFC3339), ok, tc.want[len(tc.want)-1])
			}
			if len(tc.want) > 0 {
				before := mustInstant(t, tc.want[0]).Add(-time.Second)
				if p, ok := s.Prev(before); ok {
					t.Errorf("Prev(%s) = %s, want none", before.Format(time.RFC3339), p.Format(time.RFC3339))
				}
			}
		})
	}
}

// Regression: a wall-clock time that exists in the calendar every year but in
// New York only ever falls in the spring-forward gap (since 2007, DST starts
// at 02:00 on the second Sunday of March). Under skip it never fires again,
// and Next used to walk the zone's periods forever instead of saying so.
func TestDSTTimeOnlyEverInTheGap(t *testing.T) {
	t.Parallel()
	ny := mustZone(t, "America/New_York")
	from := mustInstant(t, "2026-01-01T00:00:00Z")
	type result struct {
		next, prev     time.Time
		nextOK, prevOK bool
		shifted        []string
	}
	done := make(chan result, 1)
	go func() {
		var r result
		skip := parseForTest(t, "30 2 * 3 SUN#2", schedule.Options{Location: ny, Gap: schedule.GapSkip})
		r.next, r.nextOK = skip.Next(from)
		r.prev, r.prevOK = skip.Prev(from)
		shift := parseForTest(t, "30 2 * 3 SUN#2", schedule.Options{Location: ny, Gap: schedule.GapShift})
		r.shifted, _ = nextChain(shift, from, 2)
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return: it walks the periods of the zone forever")
	}
	if r.nextOK {
		t.Errorf("skip: Next(2026) = %s, want none", r.next.Format(time.RFC3339))
	}
	// In 2006 DST began on the first Sunday of April, so 12 March 02:30 existed.
	if want := "2006-03-12T02:30:00-05:00"; !r.prevOK || r.prev.Format(time.RFC3339) != want {
		t.Errorf("skip: Prev(2026) = %s, %v; want %s", r.prev.Format(time.RFC3339), r.prevOK, want)
	}
	if want := []string{"2026-03-08T03:00:00-04:00", "2027-03-14T03:00:00-04:00"}; !equalStrings(r.shifted, want) {
		t.Errorf("shift: fire times %q, want %q", r.shifted, want)
	}
}

func TestGapSkipped(t *testing.T) {
	ny, err := schedule.LoadZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	lh, err := schedule.LoadZone("Australia/Lord_Howe")
	if err != nil {
		t.Fatal(err)
	}
	year := func(loc *time.Location) (time.Time, time.Time) {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, loc), time.Date(2027, 1, 1, 0, 0, 0, 0, loc)
	}
	type gap struct {
		end string
		n   int
	}
	for _, tc := range []struct {
		name string
		expr string
		loc  *time.Location
		gap  schedule.Gap
		want []gap
	}{
		{"02:30 daily with gap: skip loses one fire time in 2026", "30 2 * * *", ny, schedule.GapSkip,
			[]gap{{"2026-03-08T03:00:00-04:00", 1}}},
		{"every 15 minutes loses the four of the missing hour", "*/15 * * * *", ny, schedule.GapDefault,
			[]gap{{"2026-03-08T03:00:00-04:00", 4}}},
		{"every second loses 3600", "* * * * * *", ny, schedule.GapSkip,
			[]gap{{"2026-03-08T03:00:00-04:00", 3600}}},
		{"a 30-minute gap (Lord Howe) swallows 02:00 and 02:15", "*/15 * * * *", lh, schedule.GapSkip,
			[]gap{{"2026-10-04T02:30:00+11:00", 2}}},
		{"a time outside the gap loses nothing", "30 3 * * *", ny, schedule.GapSkip, nil},
		{"gap: shift loses nothing", "30 2 * * *", ny, schedule.GapShift, nil},
		{"UTC has no gaps", "* * * * *", time.UTC, schedule.GapSkip, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := schedule.Parse(tc.expr, schedule.Options{Location: tc.loc, Gap: tc.gap})
			if err != nil {
				t.Fatal(err)
			}
			from, to := year(tc.loc)
			var got []gap
			for at, n := range s.GapSkipped(from, to) {
				got = append(got, gap{at.Format(time.RFC3339), n})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("GapSkipped over 2026 = %v; want %v", got, tc.want)
			}
		})
	}
	s, err := schedule.Parse("30 2 * * *", schedule.Options{Location: ny, Gap: schedule.GapSkip})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC) // 03:00 EDT, when the gap ends
	for _, c := range []struct {
		from, to time.Time
		want     int
	}{
		{end, end.Add(time.Second), 1},                    // from is in: [from, to)
		{end.Add(-time.Hour), end, 0},                     // to is out
		{end.Add(time.Nanosecond), end.Add(time.Hour), 0}, // after the gap ended
	} {
		n := 0
		for range s.GapSkipped(c.from, c.to) {
			n++
		}
		if n != c.want {
			t.Errorf("GapSkipped(%s, %s) yields %d gaps; want %d", c.from, c.to, n, c.want)
		}
	}
}
