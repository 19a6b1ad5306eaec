package statemachine_test

import (
	"flag"
	"math/rand/v2"
	"testing"

	sm "github.com/sundial-cron/sundial/statemachine"
)

var (
	propSeed = flag.Uint64("statemachine.seed", 0x5d1a1_0302, "seed of the property test; printed on failure")
	propCase = flag.Int("statemachine.case", -1, "run only this case of the property test")
	propTail = flag.Int("statemachine.tail", 40, "how many of the last steps a failure prints")
)

// propSchedules are the schedules the property test draws from: every
// minute, every five, hourly, an interval, manual only, and a monthly one
// whose ticks hop (a month is longer than MaxTickDelay).
var propSchedules = []string{"* * * * *", "*/5 * * * *", "0 * * * *", "@every 90s", "triggered", "0 0 1 * *"}

// TestProperty_RandomSequences runs a few thousand random event sequences
// over random policies and schedules (see sim.randomStep: tasks delivered
// on time, late, twice and stale; target outcomes for old and new launches;
// admin requests; watchdog passes; time jumps of up to 40 days) and checks
// after every step what checkStep and sim.absorb check — a refused step
// changes nothing, the state is one of States, the watchdog rule, write
// before call, no id twice in Active, at most one Launch per attempt unless
// the target said it never saw it (or its outcome is unknown and it is
// idempotent), one Record QUEUED per invocation — and at the end that every
// QUEUED invocation ended or is unfinished, every trigger is accounted for
// once, and every occurrence of the schedule while the job was enabled is
// accounted for exactly once (sim.checkOccurrences).
func TestProperty_RandomSequences(t *testing.T) {
	t.Parallel()
	cases, steps := 3000, 200
	if testing.Short() {
		cases = 300
	}
	for c := range cases {
		if *propCase >= 0 && c != *propCase {
			continue
		}
		seed := *propSeed + uint64(c)
		rng := newRand(seed)
		expr := propSchedules[rng.IntN(len(propSchedules))]
		p := randomPolicy(rng)
		s := newSim(t, seed, expr, p)
		s.log = append(s.log, "(rerun with -run TestProperty_RandomSequences -statemachine.case="+itoa(c)+")")
		s.step(sm.Defined{}, false)
		for range steps {
			s.randomStep()
		}
		s.finish()
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
