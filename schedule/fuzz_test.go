package schedule

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// fuzzZones are the zones FuzzParse picks from with its zone byte; "" is UTC.
var fuzzZones = []string{"", "America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Santiago", "Asia/Kathmandu", "Pacific/Apia"}

// fuzzInstants are the instants every accepted schedule is asked about:
// the edges of the year field, a leap day, and DST transitions of the
// zones above (New York, Apia's skipped day, Lord Howe's half hour).
var fuzzInstants = []time.Time{
	time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
	time.Date(2000, 2, 29, 12, 34, 56, 500_000_000, time.UTC),
	time.Date(2011, 12, 30, 9, 59, 59, 0, time.UTC),
	time.Date(2024, 3, 10, 6, 59, 59, 0, time.UTC),
	time.Date(2024, 4, 6, 14, 45, 0, 0, time.UTC),
	time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC),
	time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC),
	time.Date(2199, 12, 31, 23, 59, 59, 0, time.UTC),
}

// fuzzSeeds cover the grammar and its edges; testdata/fuzz/FuzzParse holds
// more, including inputs the fuzzer found interesting.
var fuzzSeeds = []string{
	"", " ", "*", "* * * *", "* * * * *", "* * * * * *", "* * * * * * *", "* * * * * * * *",
	"0 0 1 1 *", "0 0 0 1 1 * 2025", "59 59 23 31 12 * 2199", "0 0 0 1 1 * 1970", "0 0 0 1 1 * 2200",
	"*/15 * * * *", "0-59/7 */2 1-31/3 */4 0-6/2", "5/10 * * * *", "1,2,3-9/2,*/20 * * * *", "0 0 * * 7/2",
	"0 12 * JAN-MAR,jul mon-FRI", "0 0 * * sun,Sat", "0 0 * jan/2 *", "0 0 ? * ?", "0 0 ? * *", "0 0 1 * ?",
	"0 0 L * *", "0 0 L-1 * *", "0 0 L-30 * *", "0 0 LW * *", "0 0 1W * *", "0 0 31W * *", "0 0 15W,L * *",
	"0 0 ? * 5L", "0 0 ? * FRIL", "0 0 ? * 1#1", "0 0 ? * 5#5", "0 0 ? * MON#2,7L", "0 0 13 * FRI", "0 0 13 * *,FRI",
	"0 0 29 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 29 2 MON", "0 0 29 2 ? 2100", "0 0 L 2 ? 2024/4",
	"0 0 0 1 1 ? */2", "0 0 0 1 1 ? *,2030", "0 0 0 29 2 ? 2023", "0 0 0 * * * 2024-2025/3",
	"H * * * *", "H H * * *", "H(0-29)/10 H(2-4) * * *", "H/15 * * * *", "0 0 H * *", "0 0 H/5 * *", "0 0 ? * H",
	"0 0 ? * H(1-7)", "0 0 H(28-31) * *", "H H H H H H", "0 0 0 1 1 * H",
	"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@HOURLY", "@reboot", "@daily 5",
	"@every 1s", "@every 90s", "@every 1h30m", "@every 0s", "@every -1s", "@every 1.5s", "@every 500ms", "@every",
	"with 10m interval", "with 10m", "with interval", "triggered", "TRIGGERED", "triggered now",
	"CRON_TZ=America/New_York 30 2 * * *", "TZ=Europe/London 30 1 * * *", "CRON_TZ=Local * * * * *",
	"CRON_TZ= * * * * *", "CRON_TZ=Nowhere/Nothing * * * * *", "CRON_TZ=UTC", "CRON_TZ=UTC TZ=UTC * * * * *",
	"TZ=Australia/Lord_Howe @every 5m", "CRON_TZ=Pacific/Apia 0 12 30 12 ? 2011",
	"30 2 ? 3 SUN#2", "0 30 2 * * *", "0 30 1 * * *", "0 0 0 * * *", "0 45 2 * * *",
	"60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 13 *", "* * * * 8", "1-0 * * * *", "*/0 * * * *",
	"*/60 * * * *", "99999999999999999999 * * * *", "-1 * * * *", "1- * * * *", "-5 * * * *", "1-2-3 * * * *",
	"0 0 L/2 * *", "0 0 LW/2 * *", "0 0 0W * *", "0 0 32W * *", "0 0 W * *", "0 0 ? * L", "0 0 ? * #1", "0 0 ? * 1#6",
	"0 0 ? * 1#0", "0 0 ? * 8L", "0 0 ? * 5L/2", "? * * * *", "* ? * * *", "0 0 * ? *", "0 0 ?/2 * *",
	"H * * * * * H", "H(5-1) * * * *", "H(a-b) * * * *", "H(1-2 * * * *", "H/0 * * * *", "H/61 * * * *", "h * * * *",
	"0 0 * * MON-SUN", "0 0 * * SAT-SUN", "0 0 * * 7-7", "0 0 * * 0-7", "0 0 * DEC-JAN *", "0 0 * * mOn",
	"\t0\t0\t*\t*\t*\t", "0  0  *  *  *", "0,,1 * * * *", ",0 * * * *", "０ * * * *", "0 0 * * * \x00",
}

func FuzzParse(f *testing.F) {
	for i, expr := range fuzzSeeds {
		jobID := ""
		if strings.Contains(expr, "H") || i%3 == 0 {
			jobID = fmt.Sprintf("proj/job%d", i)
		}
		f.Add(expr, jobID, uint8(i%len(fuzzZones)), uint8(i%12))
	}
	locs := make([]*time.Location, len(fuzzZones))
	for i, name := range fuzzZones {
		loc, err := LoadZone(name)
		if err != nil {
			f.Fatalf("zone %q: %v", name, err)
		}
		locs[i] = loc
	}
	f.Fuzz(func(t *testing.T, expr, jobID string, zone, policy uint8) {
		opts := Options{
			JobID:    jobID,
			Location: locs[int(zone)%len(locs)],
			Gap:      Gap(policy % 3),
			Repeat:   Repeat(policy / 3 % 4),
		}
		// Run the input on its own goroutine so that a hang fails with the
		// input named instead of stalling the fuzzer until its overall
		// time limit. The deadline is generous: one input costs
		// microseconds, or a few milliseconds for a schedule that only
		// ever falls into DST gaps.
		done := make(chan string, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
				}
			}()
			done <- fuzzCheck(expr, opts)
		}()
		timer := time.NewTimer(time.Minute)
		defer timer.Stop()
		select {
		case msg := <-done:
			if msg != "" {
				t.Fatalf("Parse(%q, %+v): %s", expr, opts, msg)
			}
		case <-timer.C:
			t.Fatalf("Parse(%q, %+v): no answer after a minute", expr, opts)
		}
	})
}

// fuzzCheck parses one input and questions the schedule; it returns what
// is wrong, or "".
func fuzzCheck(expr string, opts Options) string {
	s, err := Parse(expr, opts)
	if err != nil {
		var perr *Error
		switch {
		case s != nil:
			return fmt.Sprintf("error %q with a non-nil schedule", err)
		case !errors.As(err, &perr):
			return fmt.Sprintf("error %q is a %T, not a *Error", err, err)
		case perr.Msg == "" || perr.Field < 0 || perr.Field > 7 || (perr.Field > 0) != (perr.Name != ""):
			return fmt.Sprintf("malformed error %#v", perr)
		}
		return ""
	}
	if s.String() != expr {
		return fmt.Sprintf("String() = %q", s.String())
	}
	if s.Location() == nil {
		return "no location"
	}
	if s.Explain() == "" {
		return "empty Explain()"
	}
	switch s.Kind() {
	case Triggered:
		for _, t := range fuzzInstants {
			if n, ok := s.Next(t); ok {
				return fmt.Sprintf("triggered: Next(%v) = %v", t, n)
			}
			if p, ok := s.Prev(t); ok {
				return fmt.Sprintf("triggered: Prev(%v) = %v", t, p)
			}
		}
		return ""
	case Interval:
		iv := s.Interval()
		if iv < time.Second || iv%time.Second != 0 {
			return fmt.Sprintf("interval %v", iv)
		}
		for _, t := range fuzzInstants {
			if n, ok := s.Next(t); !ok || !n.Equal(t.Add(iv)) {
				return fmt.Sprintf("interval: Next(%v) = %v, %v; want %v", t, n, ok, t.Add(iv))
			}
			if p, ok := s.Prev(t); ok {
				return fmt.Sprintf("interval: Prev(%v) = %v", t, p)
			}
		}
		return ""
	}
	if (s.Gap() != GapShift && s.Gap() != GapSkip) || s.Repeat() < RepeatFirst || s.Repeat() > RepeatBoth {
		return fmt.Sprintf("unresolved policy %v/%v", s.Gap(), s.Repeat())
	}

	// Parse refuses a schedule that can never fire. Where every matching
	// wall-clock time leads to a fire time (no DST, or gaps shifted rather
	// than skipped), there must be one from before the year field begins,
	// and Next can come up empty only once a year field has run out. With
	// GapSkip a schedule may legitimately match only skipped times.
	noSkips := s.Location() == time.UTC || s.Gap() == GapShift
	words := strings.Fields(expr)
	if len(words) > 0 && (strings.HasPrefix(words[0], "CRON_TZ=") || strings.HasPrefix(words[0], "TZ=")) {
		words = words[1:]
	}
	runsOut := len(words) == 7 && words[6] != "*"
	early := time.Date(1969, 12, 30, 0, 0, 0, 0, time.UTC)
	if _, ok := s.Next(early); !ok && noSkips {
		return fmt.Sprintf("accepted, but Next(%v) finds no fire time", early)
	}
	farFuture := time.Date(2600, 1, 1, 0, 0, 0, 0, time.UTC)
	farPast := time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, t := range fuzzInstants {
		n, nok := s.Next(t)
		p, pok := s.Prev(t)
		if nok {
			switch {
			case !n.After(t):
				return fmt.Sprintf("Next(%v) = %v, not after it", t, n)
			case n.Nanosecond() != 0:
				return fmt.Sprintf("Next(%v) = %v, not a whole second", t, n)
			}
			if pp, ok := s.Prev(n); !ok || !pp.Equal(n) {
				return fmt.Sprintf("Prev(Next(%v) = %v) = %v, %v", t, n, pp, ok)
			}
			if nn, ok := s.Next(n.Add(-time.Nanosecond)); !ok || !nn.Equal(n) {
				return fmt.Sprintf("Next(Next(%v) - 1ns) = %v, %v; want %v", t, nn, ok, n)
			}
			if nn, ok := s.Next(n); ok && !nn.After(n) {
				return fmt.Sprintf("Next(%v) = %v, not after it", n, nn)
			}
		} else if noSkips && !runsOut {
			return fmt.Sprintf("Next(%v) finds nothing, but the schedule has no year field to run out", t)
		} else if last, ok := s.Prev(farFuture); ok && last.After(t) {
			// Next says nothing fires after t; Prev must agree.
			return fmt.Sprintf("Next(%v) finds nothing, but Prev(%v) = %v", t, farFuture, last)
		}
		if pok {
			if p.After(t) || p.Nanosecond() != 0 {
				return fmt.Sprintf("Prev(%v) = %v", t, p)
			}
			// Nothing fires in (p, t], so the fire time after p is Next(t).
			if pn, ok := s.Next(p); ok != nok || (ok && !pn.Equal(n)) {
				return fmt.Sprintf("Next(Prev(%v) = %v) = %v, %v; want Next(t) = %v, %v", t, p, pn, ok, n, nok)
			}
		} else if first, ok := s.Next(farPast); ok && !first.After(t) {
			return fmt.Sprintf("Prev(%v) finds nothing, but Next(%v) = %v", t, farPast, first)
		}
	}
	// Between lists what the Next chain lists.
	from := fuzzInstants[3]
	var chain []time.Time
	for n, ok := s.Next(from.Add(-time.Nanosecond)); ok && len(chain) < 5; n, ok = s.Next(n) {
		chain = append(chain, n)
	}
	i := 0
	for b := range s.Between(from, farFuture) {
		if i >= len(chain) || !b.Equal(chain[i]) {
			return fmt.Sprintf("Between(%v, ...) #%d = %v; the Next chain is %v", from, i, b, chain)
		}
		if i++; i == len(chain) {
			break
		}
	}
	if i != len(chain) {
		return fmt.Sprintf("Between(%v, ...) stopped after %d; the Next chain is %v", from, i, chain)
	}
	return ""
}
