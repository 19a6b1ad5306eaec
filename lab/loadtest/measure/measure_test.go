package measure

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestQuantileIsTheNearestRank(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50}, {0.9, 90}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := quantile(d, c.q); got != c.want {
			t.Errorf("quantile(1..100, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := quantile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("quantile of one = %v, want 7", got)
	}
}

func TestLatenessOfSortsAndReadsTheQuantiles(t *testing.T) {
	t.Parallel()
	var late []time.Duration
	for i := 100; i >= 1; i-- {
		late = append(late, time.Duration(i)*time.Millisecond)
	}
	got := LatenessOf(late)
	want := Lateness{LatenessP50: 0.050, LatenessP90: 0.090, LatenessP99: 0.099, LatenessMax: 0.100}
	if got != want {
		t.Errorf("LatenessOf(100 ms .. 1 ms) = %+v, want %+v", got, want)
	}
	if got := LatenessOf(nil); got != (Lateness{}) {
		t.Errorf("LatenessOf(nil) = %+v, want zeros", got)
	}
}

func TestSamplerSamplesAtOnceAndStopsTwice(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	s := StartSampler(time.Hour, func() { n.Add(1) })
	s.Stop()
	s.Stop()
	if got := n.Load(); got != 1 {
		t.Errorf("sampled %d times in an hour's interval, want once, at the start", got)
	}
}
