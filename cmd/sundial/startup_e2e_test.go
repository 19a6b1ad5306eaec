package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A project of 100,000 jobs keeps neither the server from listening nor
// the small projects beside it from running: the server listens before the
// big project is in, and each small project's job fires while the big one
// is still being applied. A stop in the middle of the big apply cuts it
// short.
// Before, the server listened only once every project was applied (206 s
// for 100,000 jobs), and the projects were applied one after another.
func TestServeListensAndRunsSmallProjectsWhileABigOneIsApplied(t *testing.T) {
	t.Parallel()
	recv := newReceiver(t, 0)
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	var big strings.Builder
	big.WriteString("jobs:\n")
	for i := range 100_000 {
		fmt.Fprintf(&big, "  - id: j%d\n    schedule: \"H * * * *\"\n    noop: {}\n", i)
	}
	writeConfig(t, configs, "big", big.String())
	const small = 3
	for i := range small {
		// "big" sorts first, so a server that applied projects in turn
		// would apply it first.
		writeConfig(t, configs, fmt.Sprintf("small%d", i), everySecond(1, recv.URL))
	}

	binary(t) // built before the clock starts
	start := time.Now()
	s := serve(t, "--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs)
	t.Logf("listening %v after the start, with 100,000 jobs to apply", time.Since(start).Round(time.Millisecond))
	bigApplied := func() bool { return strings.Contains(s.log.String(), `"msg":"config applied","project":"big"`) }
	if bigApplied() {
		t.Fatal("the big project was applied before the server listened; the test shows nothing")
	}
	recv.waitFor(t, time.Minute, "every small project's job to fire", func(hits []hit) bool {
		fired := map[string]bool{}
		for _, h := range hits {
			fired[h.job] = true
		}
		for i := range small {
			if !fired[fmt.Sprintf("small%d/j0", i)] {
				return false
			}
		}
		return true
	})
	if bigApplied() {
		t.Fatal("the big project was applied before the small ones ran; the test shows nothing")
	}
	s.stop(t)
	if !strings.Contains(s.log.String(), `"msg":"config not applied; the last good revision keeps running","project":"big"`) {
		t.Errorf("the stop did not cut the big project's apply short:\n%s", tail(s.log.String(), 20))
	}
}

// tail is the last n lines of a log.
func tail(log string, n int) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
