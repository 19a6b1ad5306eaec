package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The shipped binary links no part of the lab: no lab package, not the
// lab's command, not the emulator starter, and no test double (a package
// named ...test). Each would grow what operators run for what only
// developers use.
func TestTheBinaryLinksNoLab(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/sundial-cron/sundial/"
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		if strings.HasPrefix(rel, "lab/") || rel == "cmd/sundial-lab" ||
			rel == "internal/emulator" || strings.HasSuffix(rel, "test") {
			t.Errorf("sundial links %s", pkg)
		}
	}
}
