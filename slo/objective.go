// Package slo judges a job's history against its objectives: how late its
// launches may come, and how many of its invocations must succeed, over a
// window. It is pure: records and a clock in, attainment and error budget
// out, for the console to show and the engine to count as metrics.
package slo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Objective is what a job promises over a window, in the style of the SRE
// workbook: a fraction of events that must be good, the rest its error
// budget. A zero field has no objective of that kind.
type Objective struct {
	// Lateness is how long after its scheduled time (plus jitter) a
	// launch may come and still be on time; 0 for no lateness objective.
	Lateness time.Duration
	// OnTime is the fraction of launches that must be on time.
	OnTime float64
	// Success is the fraction of ended invocations that must succeed; 0
	// for no success objective.
	Success float64
	// Window is the span of history attainment is measured over.
	Window time.Duration
	// None marks a job that opted out of the server's default objectives.
	None bool
}

// The defaults of a job's objectives: docs/config.md names them. Seven
// days lie within the history every job keeps by default (30 days of
// successes), and long enough to average out a bad hour.
const (
	DefaultOnTime = 0.99
	DefaultWindow = 7 * 24 * time.Hour
)

// Bounds on what an objective may say: a window of a day at least, as
// the alert rules' slow pair reads a day and more, and none longer than
// the longest retention a config may ask for, beyond which there is no
// history to judge; a target of 100% leaves no budget, and the burn rate
// divides by it.
const (
	MinWindow = 24 * time.Hour
	MaxWindow = 400 * 24 * time.Hour
	MaxTarget = 0.99999
)

// Set reports whether o holds an objective of either kind.
func (o Objective) Set() bool { return !o.None && (o.Lateness > 0 || o.Success > 0) }

// Fill is o with the defaults of the server for a job that says nothing
// of objectives, and the default target and window for one that leaves
// them out.
func (o Objective) Fill(server Objective) Objective {
	if o == (Objective{}) {
		o = server
	}
	if o.None {
		return Objective{None: true}
	}
	if o.Lateness > 0 && o.OnTime == 0 {
		o.OnTime = DefaultOnTime
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	return o
}

// Check reports what is wrong with o, naming the field as a config writes
// it.
func (o Objective) Check() error {
	for _, t := range []struct {
		name string
		v    float64
	}{{"on_time", o.OnTime}, {"success", o.Success}} {
		if t.v < 0 || t.v > MaxTarget {
			return fmt.Errorf("%s: %s: want more than 0%% and at most %s", t.name, Percent(t.v), Percent(MaxTarget))
		}
	}
	if o.Lateness < 0 {
		return fmt.Errorf("lateness: %s: want a positive duration", o.Lateness)
	}
	if o.Window != 0 && (o.Window < MinWindow || o.Window > MaxWindow) {
		return fmt.Errorf("window: %s: want from %s to %s", FormatWindow(o.Window), FormatWindow(MinWindow), FormatWindow(MaxWindow))
	}
	return nil
}

// ParsePercent reads a target written as a percentage, "99%" or "99.95%".
func ParsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	// Rounded to the nine places a target may have, so that 99.9% is
	// 0.999 and not the float division makes of it.
	v = math.Round(v*1e7) / 1e9
	if !ok || err != nil || math.IsNaN(v) || v <= 0 || v > MaxTarget {
		return 0, fmt.Errorf("%q: want a percentage above 0%% and at most %s, such as 99%% or 99.9%%", s, Percent(MaxTarget))
	}
	return v, nil
}

// Percent writes a fraction as the percentage ParsePercent reads.
func Percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e4, 'f', -1, 64) + "%"
}

// RatioPercent writes an attained ratio as a percentage to two places,
// never rounding a miss up to 100%.
func RatioPercent(r float64) string {
	return strconv.FormatFloat(math.Floor(r*10000)/100, 'f', -1, 64) + "%"
}

// ParseWindow reads a window in days ("7d") or as a Go duration ("36h").
func ParseWindow(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q: want a whole number of days such as 7d, or a duration such as 36h", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a whole number of days such as 7d, or a duration such as 36h", s)
	}
	return d, nil
}

// FormatWindow writes a window as ParseWindow reads it, in days when it is
// whole days.
func FormatWindow(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.String()
}
