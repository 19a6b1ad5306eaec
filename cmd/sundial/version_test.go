package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/internal/version"
)

func TestVersionAndDashDashVersionSayTheBuild(t *testing.T) {
	t.Parallel()
	want := version.Get()
	for _, verb := range []string{"version", "--version"} {
		out, errOut, status := runCLI(verb)
		if status != 0 || errOut != "" {
			t.Fatalf("sundial %s: status %d, stderr %q", verb, status, errOut)
		}
		if first, _, _ := strings.Cut(out, "\n"); first != "sundial "+want.Version {
			t.Errorf("sundial %s: first line %q, want %q", verb, first, "sundial "+want.Version)
		}
		if !strings.Contains(out, "go           "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
			t.Errorf("sundial %s: %q does not name the Go that built it", verb, out)
		}
	}
}

func TestVersionJSONIsTheAPIs(t *testing.T) {
	t.Parallel()
	out, errOut, status := runCLI("version", "--json")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	var got version.Info
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if got != version.Get() {
		t.Errorf("got %+v, want %+v", got, version.Get())
	}
}

func TestVersionRefusesArguments(t *testing.T) {
	t.Parallel()
	if _, errOut, status := runCLI("version", "now"); status != exitUsage || !strings.Contains(errOut, `unexpected argument "now"`) {
		t.Errorf("status %d, stderr %q, want %d and the argument named", status, errOut, exitUsage)
	}
}
