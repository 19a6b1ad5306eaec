package forecast_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/forecast"
	"github.com/sundial-cron/sundial/statemachine"
)

// start is the instant every test forecasts from: a Saturday, the day
// before Europe's clocks go back.
var start = time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC)

func job(t testing.TB, id, expr, zone string, jitter time.Duration) forecast.Job {
	t.Helper()
	j, err := forecast.Of(id, &engine.Definition{Schedule: expr, TimeZone: zone, Policy: statemachine.Policy{Jitter: jitter}})
	if err != nil {
		t.Fatalf("%s %q: %v", id, expr, err)
	}
	return j
}

var exprs = []string{"* * * * *", "*/7 * * * *", "0 * * * *", "H * * * *", "H H * * *", "30 2 * * *", "0 0 * * *",
	"H/10 * * * * *", "@every 90s", "@every 7m", "triggered", "0 0 29 2 *", "H 1-3 * * *", "*/20 * * * * *"}

var zones = []string{"", "Europe/Paris", "America/New_York", "Asia/Kolkata"}

// randomJobs are jobs of every kind of schedule, zone and jitter, several
// of them sharing a schedule.
func randomJobs(t testing.TB, r *rand.Rand, n int) []forecast.Job {
	var jobs []forecast.Job
	for i := range n {
		var jitter time.Duration
		if r.IntN(4) == 0 {
			jitter = time.Duration(r.IntN(120)) * time.Second
		}
		jobs = append(jobs, job(t, fmt.Sprintf("p%d/j%d", i%3, i), exprs[r.IntN(len(exprs))], zones[r.IntN(len(zones))], jitter))
	}
	return jobs
}

func TestTheCountsOfALoadSumToItsJobsLaunches(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 40))
		jobs := randomJobs(t, r, 1+r.IntN(40))
		from := start.Add(time.Duration(r.IntN(48*3600)) * time.Second)
		horizon := time.Duration(1+r.IntN(48)) * time.Hour
		want := 0
		for _, j := range jobs {
			for at := range j.Launches(from, from.Add(horizon)) {
				if at.Before(from) || !at.Before(from.Add(horizon)) {
					t.Fatalf("seed %d: %s launches at %s, outside [%s, +%s)", seed, j.ID, at, from, horizon)
				}
				want++
			}
		}
		for _, step := range []time.Duration{time.Second, time.Minute, time.Hour} {
			if got := forecast.Count(jobs, from, horizon, step).Total(); got != want {
				t.Errorf("seed %d, step %s: the counts sum to %d, the jobs launch %d times", seed, step, got, want)
			}
		}
	}
}

func TestJobsOfOneScheduleCountAsEachAlone(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	jobs := randomJobs(t, r, 60)
	all := forecast.Count(jobs, start, 26*time.Hour, time.Minute)
	sum := make([]int, len(all.Counts))
	for _, j := range jobs {
		for i, c := range forecast.Count([]forecast.Job{j}, start, 26*time.Hour, time.Minute).Counts {
			sum[i] += c
		}
	}
	for i := range sum {
		if sum[i] != all.Counts[i] {
			t.Fatalf("minute %d: %d launches counted together, %d one by one", i, all.Counts[i], sum[i])
		}
	}
}

func TestLoads(t *testing.T) {
	for _, c := range []struct {
		name     string
		jobs     []forecast.Job
		total    int
		peakAt   time.Time
		peak     int
		horizon  time.Duration
		stepSize time.Duration
	}{
		{name: "a job every minute launches 1440 times a day, one a minute",
			jobs: []forecast.Job{job(t, "p/a", "* * * * *", "", 0)}, horizon: 24 * time.Hour, stepSize: time.Minute,
			total: 1440, peak: 1, peakAt: start},
		{name: "three midnight jobs pile onto midnight's second",
			jobs: []forecast.Job{job(t, "p/a", "0 0 * * *", "", 0), job(t, "p/b", "@daily", "", 0), job(t, "p/c", "0 0 * * *", "", 0)}, horizon: 24 * time.Hour, stepSize: time.Second,
			total: 3, peak: 3, peakAt: start},
		{name: "Paris's 02:30 happens twice on the night the clocks go back, and the job runs once (repeat: first)",
			jobs: []forecast.Job{job(t, "p/a", "30 2 * * *", "Europe/Paris", 0)}, horizon: 48 * time.Hour, stepSize: time.Hour,
			total: 2, peak: 1, peakAt: time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC)},
		{name: "a job paused until noon launches from noon",
			jobs: []forecast.Job{func() forecast.Job {
				j := job(t, "p/a", "0 * * * *", "", 0)
				j.NotBefore = start.Add(12 * time.Hour)
				return j
			}()}, horizon: 24 * time.Hour, stepSize: time.Hour,
			total: 12, peak: 1, peakAt: start.Add(12 * time.Hour)},
		{name: "a triggered job never launches by itself",
			jobs: []forecast.Job{job(t, "p/a", "triggered", "", 0)}, horizon: 24 * time.Hour, stepSize: time.Minute,
			total: 0, peak: 0, peakAt: start},
		{name: "a jitter moves midnight's launch out of its second",
			jobs: []forecast.Job{job(t, "p/a", "0 0 * * *", "", time.Hour)}, horizon: 24 * time.Hour, stepSize: time.Hour,
			total: 1, peak: 1, peakAt: start},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := forecast.Count(c.jobs, start, c.horizon, c.stepSize)
			at, peak := l.Peak()
			if l.Total() != c.total || peak != c.peak || !at.Equal(c.peakAt) {
				t.Errorf("total %d, peak %d at %s; want %d, %d at %s", l.Total(), peak, at, c.total, c.peak, c.peakAt)
			}
		})
	}
}

func TestSpreading(t *testing.T) {
	for expr, want := range map[string]string{
		"0 0 * * *":                   "H 0 * * *",
		"30 2 * * 1-5":                "H 2 * * 1-5",
		"@daily":                      "H 0 * * *",
		"@hourly":                     "H * * * *",
		"CRON_TZ=Europe/Paris @daily": "CRON_TZ=Europe/Paris H 0 * * *",
		"* * * * *":                   "H * * * * *",
		"*/5 * * * *":                 "H */5 * * * *",
		"0 */5 * * * *":               "H */5 * * * *",
		"H * * * *":                   "",
		"* * * * * *":                 "",
		"@every 10m":                  "",
		"triggered":                   "",
	} {
		if got := forecast.Spreading(expr); got != want {
			t.Errorf("Spreading(%q) = %q, want %q", expr, got, want)
		}
	}
}

// BenchmarkDayPerMinute forecasts a day per minute for 10,000 jobs that
// fire every minute: written alike ("* * * * *", computed once), each at
// its own hashed second ("H * * * * *", which moves no launch out of its
// minute: computed once too), and each with a jitter (computed one by
// one, the worst case).
func BenchmarkDayPerMinute(b *testing.B) {
	for _, c := range []struct {
		name, expr string
		jitter     time.Duration
	}{{"alike", "* * * * *", 0}, {"hashed-second", "H * * * * *", 0}, {"jittered", "* * * * *", 30 * time.Second}} {
		jobs := make([]forecast.Job, 10000)
		for i := range jobs {
			jobs[i] = job(b, fmt.Sprintf("p/j%d", i), c.expr, "", c.jitter)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				forecast.Count(jobs, start, 24*time.Hour, time.Minute)
			}
		})
	}
}
