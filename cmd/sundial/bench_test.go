package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/tools/loadtest"
)

func TestBenchRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--sync", "off"}, `--sync "off": want full or normal`},
		{[]string{"bench", "--jobs", "0"}, "jobs and minutes must be positive"},
		{[]string{"bench", "extra"}, `unexpected argument "extra"`},
	} {
		_, stderr, status := runCLI(c.args...)
		if status != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, status, stderr, exitUsage, c.want)
		}
	}
}

// TestBenchCPUCountsTheMeasuredMinutesOnly: the CPU of defining the jobs and
// of the warm-up must not be charged to the measured launches.
func TestBenchCPUCountsTheMeasuredMinutesOnly(t *testing.T) {
	t.Parallel()
	began := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	// 10 CPU-seconds while defining (2 s), then half a core: the window is
	// 12:01:03 to 12:02:03.
	var c cpuSampler
	for s := 0; s <= 200; s++ {
		cpu := 10 + 0.5*float64(s-2)
		if s < 2 {
			cpu = 5 * float64(s)
		}
		c.samples = append(c.samples, cpuSample{began.Add(time.Duration(s) * time.Second), cpu})
	}
	rep := withCPU(loadtest.Report{Minutes: 1, DefineSeconds: 2.2, Launches: 6000}, &c, began, 0)
	if rep.CPUSeconds != 30 || rep.CPUPer1000Launches != 5 || rep.CPURunSeconds != 109 {
		t.Errorf("cpu %v, per 1,000 %v, run %v; want 30, 5 and 109", rep.CPUSeconds, rep.CPUPer1000Launches, rep.CPURunSeconds)
	}
}

// TestProcSelfCPUReadsTheProcess: the figure is the process's own CPU, so
// it grows while the process computes.
func TestProcSelfCPUReadsTheProcess(t *testing.T) {
	t.Parallel()
	first := procSelfCPU()
	x := uint64(1)
	for i := 0; procSelfCPU() == first && i < 1e6; i++ {
		for j := range 100000 {
			x = x*6364136223846793005 + uint64(j)
		}
	}
	if got := procSelfCPU(); got <= first {
		t.Errorf("CPU stayed at %v s while computing (%d)", got, x)
	}
}
