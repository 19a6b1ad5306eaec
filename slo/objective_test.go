package slo

import (
	"testing"
	"time"
)

func TestFill(t *testing.T) {
	server := Objective{Lateness: time.Minute, OnTime: 0.95, Success: 0.9, Window: 28 * 24 * time.Hour}
	for _, c := range []struct {
		name string
		job  Objective
		want Objective
	}{
		{"a job that says nothing takes the server's", Objective{}, server},
		{"a job that says something takes none of the server's", Objective{Success: 0.99}, Objective{Success: 0.99, Window: DefaultWindow}},
		{"a lateness without a target takes 99%", Objective{Lateness: time.Second}, Objective{Lateness: time.Second, OnTime: DefaultOnTime, Window: DefaultWindow}},
		{"a job that opts out has none", Objective{None: true}, Objective{None: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.job.Fill(server); got != c.want {
				t.Errorf("Fill = %+v, want %+v", got, c.want)
			}
		})
	}
	if got := (Objective{}).Fill(Objective{}); got.Set() {
		t.Errorf("no objective anywhere: %+v is set", got)
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"99%": 0.99, "99.9%": 0.999, "50 %": 0.5, "99.999%": 0.99999} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"99", "0.99", "100%", "0%", "-1%", "x%", "NaN%", "99.9999%"} {
		if got, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) = %v, want an error", in, got)
		}
	}
	for _, f := range []float64{0.99, 0.999, 0.5, 0.99999} {
		if got, _ := ParsePercent(Percent(f)); got != f {
			t.Errorf("%v written %s reads %v", f, Percent(f), got)
		}
	}
}

func TestParseWindow(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour, "28d": 28 * 24 * time.Hour} {
		if got, err := ParseWindow(in); err != nil || got != want {
			t.Errorf("ParseWindow(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseWindow(FormatWindow(want)); back != want {
			t.Errorf("FormatWindow(%v) = %q reads %v", want, FormatWindow(want), back)
		}
	}
	for _, in := range []string{"d", "0d", "-1d", "1.5d", "7", "0s", "week"} {
		if _, err := ParseWindow(in); err == nil {
			t.Errorf("ParseWindow(%q): want an error", in)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, bad := range []Objective{
		{Success: 1}, {OnTime: 1.5}, {Success: -0.1}, {Lateness: -time.Second},
		{Success: 0.9, Window: time.Hour}, {Success: 0.9, Window: 500 * 24 * time.Hour},
	} {
		if bad.Check() == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
	if err := both.Check(); err != nil {
		t.Errorf("%+v: %v", both, err)
	}
}

// An attained ratio is written to two places and never rounded up: a
// miss by a hair is no 100%.
func TestRatioPercentNeverRoundsAMissUp(t *testing.T) {
	for in, want := range map[float64]string{1: "100%", 0: "0%", 0.99999: "99.99%", 2.0 / 3: "66.66%", 0.5: "50%", 0.9995: "99.95%"} {
		if got := RatioPercent(in); got != want {
			t.Errorf("RatioPercent(%v) = %q, want %q", in, got, want)
		}
	}
}
