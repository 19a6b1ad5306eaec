package main

import (
	"strings"
	"testing"
)

func TestSimulateRefusesBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--faults", "apocalyptic"}, `unknown fault level "apocalyptic"`},
		{[]string{"simulate", "--jobs", "0"}, "jobs and days must be positive"},
		{[]string{"simulate", "--backend", "postgres"}, `unknown backend "postgres"`},
		{[]string{"simulate", "extra"}, `unexpected argument "extra"`},
	} {
		_, stderr, status := runCLI(c.args...)
		if status != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, status, stderr, exitUsage, c.want)
		}
	}
}

func TestUnknownCommandIsRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"serve"}} {
		_, stderr, status := runCLI(args...)
		if status != exitUsage || !strings.Contains(stderr, "usage:") {
			t.Errorf("%v: status %d, stderr %q; want %d and the usage", args, status, stderr, exitUsage)
		}
	}
}
