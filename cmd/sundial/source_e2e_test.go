package main

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A second server started by mistake on the same database with another
// config directory refuses to start, naming both sources, and changes
// nothing: the first server's projects keep running. Before, it marked
// every job of the first server's projects DISABLED ("removed from
// config") and made the first server run its own projects. Moving the
// configs on purpose (--config-moved) takes the database over, and the
// old server's refreshes then change nothing.
func TestServeRefusesASecondConfigSource(t *testing.T) {
	eachShape(t, func(t *testing.T, storage []string) {
		dir := t.TempDir()
		mine, other := filepath.Join(dir, "mine"), filepath.Join(dir, "other")
		mkdir(t, mine)
		mkdir(t, other)
		writeConfig(t, mine, "p", "jobs:\n  - id: a\n    schedule: triggered\n    noop: {}\n")
		writeConfig(t, other, "q", "jobs:\n  - id: b\n    schedule: triggered\n    noop: {}\n")
		first := serve(t, append(slices.Clone(storage), "--config-dir", mine, "--config-refresh", "1h")...)
		waitForJob(t, first, "p", "a")

		var stderr bytes.Buffer
		code := runServe(append(slices.Clone(storage), "--config-dir", other, "--listen", "127.0.0.1:0"), io.Discard, &stderr, time.Now)
		for _, want := range []string{"another config source: config directory " + mine, "this one is config directory " + other, "--config-moved"} {
			if code != 1 || !strings.Contains(stderr.String(), want) {
				t.Errorf("a second server with another config directory: exit %d, log:\n%s\nwant exit 1 saying %q", code, stderr.String(), want)
			}
		}
		if state := getJob(t, first, "p", "a").State; state != "SCHEDULED" {
			t.Errorf("p/a is %s after the second server was refused; want SCHEDULED", state)
		}

		moved := serve(t, append(slices.Clone(storage), "--config-dir", other, "--config-refresh", "1h", "--config-moved")...)
		waitForJob(t, moved, "q", "b")
		waitUntil(t, time.Minute, "p/a to be removed from config by the moved server", func() bool {
			return getJob(t, moved, "p", "a").State == "DISABLED"
		})
		first.hup(t)
		waitUntil(t, time.Minute, "the first server to skip its refresh", func() bool {
			return strings.Contains(first.log.String(), "config refresh skipped")
		})
		if state := getJob(t, moved, "q", "b").State; state != "SCHEDULED" {
			t.Errorf("q/b is %s after the old server's refresh; want SCHEDULED: the old server fought over it", state)
		}
	})
}
