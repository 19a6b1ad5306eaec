package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestScheduleJSONSaysWhatTheTextSays: --json prints the fire times,
// explanation and preview the text prints, as JSON a script can read:
// for an expression and for a config's job, for next and explain.
func TestScheduleJSONSaysWhatTheTextSays(t *testing.T) {
	t.Parallel()
	decode := func(t *testing.T, out string, v any) {
		t.Helper()
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%v in\n%s", err, out)
		}
	}
	type exprJSON struct {
		Schedule    string      `json:"schedule"`
		TimeZone    string      `json:"time_zone"`
		Explanation string      `json:"explanation"`
		FireTimes   []time.Time `json:"fire_times"`
	}
	for _, args := range [][]string{
		{"next", "30 2 * * *", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00Z", "-n", "3"},
		{"explain", "H 9 * * 1-5", "--job-id", "p/j", "--from", "2026-03-07T12:00:00Z"},
		{"next", "triggered"},
	} {
		text, errOut, status := runCLI(append([]string{"schedule"}, args...)...)
		if status != 0 {
			t.Fatalf("%v: status %d, stderr %s", args, status, errOut)
		}
		out, errOut, status := runCLI(append([]string{"schedule"}, append(args, "--json")...)...)
		if status != 0 {
			t.Fatalf("%v --json: status %d, stderr %s", args, status, errOut)
		}
		var got exprJSON
		decode(t, out, &got)
		var lines []string
		if args[0] == "explain" {
			lines = append(lines, got.Explanation)
		}
		for _, ft := range got.FireTimes {
			lines = append(lines, ft.Format(time.RFC3339))
		}
		if want := strings.Join(lines, "\n"); strings.TrimSuffix(text, "\n") != want {
			t.Errorf("%v: the text\n%s\nbut the JSON says\n%s", args, text, want)
		}
		if got.Schedule != args[1] || got.Explanation == "" {
			t.Errorf("%v: schedule %q, explanation %q", args, got.Schedule, got.Explanation)
		}
	}
	if out, _, _ := runCLI("schedule", "next", "0 9 * * *", "--tz", "Europe/Paris", "-n", "1", "--json"); !strings.Contains(out, `"time_zone": "Europe/Paris"`) {
		t.Errorf("--tz Europe/Paris: %s", out)
	}

	dir := t.TempDir()
	config := strings.Replace(jobScheduleConfig, "    max_runs: 3\n", "    max_runs: 3\n    jitter: 10m\n", 1)
	for name, data := range map[string]string{"billing.yaml": config, "holidays.ics": jobScheduleICS} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "billing.yaml")
	out, errOut, status := runCLI("schedule", "explain", "--config", file, "--job", "report", "--from", "2026-03-02T00:00:00Z", "--json")
	if status != 0 {
		t.Fatalf("--config --json: status %d, stderr %s", status, errOut)
	}
	type line struct {
		At       time.Time `json:"at"`
		LaunchAt time.Time `json:"launch_at"`
		Last     time.Time `json:"last"`
		Count    int       `json:"count"`
		Removed  string    `json:"removed"`
	}
	var got struct {
		Job         string `json:"job"`
		Schedule    string `json:"schedule"`
		Explanation string `json:"explanation"`
		Settings    []struct{ Name, Value string }
		MaxRuns     int64  `json:"max_runs"`
		Jitter      string `json:"jitter"`
		Lines       []line `json:"lines"`
		End         string `json:"end"`
	}
	decode(t, out, &got)
	text, _, _ := runCLI("schedule", "explain", "--config", file, "--job", "report", "--from", "2026-03-02T00:00:00Z")
	var said []string
	said = append(said, got.Job+": "+got.Explanation)
	for _, s := range got.Settings {
		said = append(said, "  "+s.Name+": "+s.Value)
	}
	for _, l := range got.Lines {
		switch {
		case l.Removed == "" && !l.LaunchAt.After(l.At):
			t.Errorf("the occurrence at %v is launched at %v, under a 10m jitter", l.At, l.LaunchAt)
		case l.Removed == "":
			said = append(said, l.At.Format(time.RFC3339)+"  (jitter +"+l.LaunchAt.Sub(l.At).String()+": launched at "+l.LaunchAt.Format(time.RFC3339Nano)+")")
		case l.Count == 1:
			said = append(said, l.At.Format(time.RFC3339)+"  removed: "+l.Removed)
		default:
			said = append(said, l.At.Format(time.RFC3339)+" .. "+l.Last.Format(time.RFC3339)+"  "+strconv.Itoa(l.Count)+" removed: "+l.Removed)
		}
	}
	if got.End != "" {
		said = append(said, got.End)
	}
	var textLines []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !strings.HasPrefix(l, "  max_runs:") && !strings.HasPrefix(l, "  jitter:") {
			textLines = append(textLines, l)
		}
	}
	if strings.Join(said, "\n") != strings.Join(textLines, "\n") {
		t.Errorf("the text\n%s\nbut the JSON says\n%s", strings.Join(textLines, "\n"), strings.Join(said, "\n"))
	}
	if got.Job != "billing/report" || got.Schedule != "30 2 * * *" || got.MaxRuns != 3 || got.Jitter != "10m0s" {
		t.Errorf("job %q, schedule %q, max_runs %d, jitter %q, end %q", got.Job, got.Schedule, got.MaxRuns, got.Jitter, got.End)
	}

	// Fewer than asked for: why none follows.
	out, _, _ = runCLI("schedule", "next", "--config", file, "--job", "report", "--from", "2026-03-02T00:00:00Z", "-n", "10", "--json")
	got.End = ""
	decode(t, out, &got)
	text, _, _ = runCLI("schedule", "next", "--config", file, "--job", "report", "--from", "2026-03-02T00:00:00Z", "-n", "10")
	if lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n"); got.End == "" || got.End != lines[len(lines)-1] {
		t.Errorf("end %q, the text's last line %q", got.End, lines[len(lines)-1])
	}
}
