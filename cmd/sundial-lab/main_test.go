package main

import (
	"bytes"
	"time"
)

// runCLI runs the command on a fixed clock and returns what it printed and
// its exit status.
func runCLI(args ...string) (stdout, stderr string, status int) {
	var out, errOut bytes.Buffer
	status = run(args, &out, &errOut, func() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) })
	return out.String(), errOut.String(), status
}
