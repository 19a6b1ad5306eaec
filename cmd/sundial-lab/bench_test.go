package main

import (
	"strings"
	"testing"
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
