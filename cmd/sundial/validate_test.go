package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good/billing.yaml", "jobs:\n  - id: heartbeat\n    schedule: \"@every 30s\"\n    noop: {}\n")
	write("good/ops.yml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    noop: {}\n  - id: b\n    schedule: \"@daily\"\n    noop: {}\n")
	write("good/reports.yaml", "jobs:\n  - id: daily\n    schedule: \"@daily\"\n    pubsub:\n      topic: projects/acme/topics/reports\n      data: daily\n      attributes: {kind: report}\n      ordering_key: reports\n")
	bad := write("bad/billing.yaml", "jobs:\n  - id: a\n    schedule: \"61 * * * *\"\n    noop: {}\n    colour: blue\n")
	write("bad/ops.yaml", "jobs:\n  - id: rotate\n    schedule: \"@hourly\"\n    swarming: {}\n")
	write("bad/fine.yaml", "jobs: []\n")
	badTopic := write("bad/reports.yaml", "jobs:\n  - id: daily\n    schedule: \"@daily\"\n    pubsub:\n      topic: reports\n")
	for _, tc := range []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string   // stdout, exactly
		wantErr    []string // lines stderr must have, in order
	}{
		{"a valid directory", []string{"validate", filepath.Join(dir, "good")}, 0, "3 config files, 4 jobs: valid\n", nil},
		{"a valid file", []string{"validate", good}, 0, "1 config file, 1 job: valid\n", nil},
		{"an invalid directory lists every error of every file", []string{"validate", filepath.Join(dir, "bad")}, 1, "", []string{
			bad + ":3: jobs[0].schedule: ",
			bad + ":5: jobs[0].colour: unknown field",
			filepath.Join(dir, "bad", "ops.yaml") + `:4: jobs[0].swarming: swarming: server "": want https://<host>`,
			badTopic + `:5: jobs[0].pubsub: pubsub: bad topic "reports": want projects/<project>/topics/<topic>`,
			"3 of 4 config files invalid, 4 errors (target kinds known: command, noop, pubsub, swarming, url_fetch)",
		}},
		{"files and directories together", []string{"validate", good, bad}, 1, "", []string{bad + ":3:", "1 of 2 config files invalid, 2 errors"}},
		{"nothing to check", []string{"validate"}, exitUsage, "", []string{"sundial validate: expected one or more config files or directories"}},
		{"a path that does not exist", []string{"validate", filepath.Join(dir, "nope")}, exitUsage, "", []string{"no such file or directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, status := runCLI(tc.args...)
			if status != tc.wantStatus || out != tc.wantOut {
				t.Errorf("status %d, stdout %q, want %d and %q; stderr:\n%s", status, out, tc.wantStatus, tc.wantOut, errOut)
			}
			rest := errOut
			for _, w := range tc.wantErr {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stderr:\n%s\nwant, in order, %q", errOut, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}

	// --json: the same findings on stdout, each error with its file,
	// line and field, for a config repo's CI to annotate; the same exit
	// status.
	type found struct {
		Valid   bool
		Files   int
		Invalid int `json:"invalid_files"`
		Jobs    int
		Errors  []struct {
			File, Field, Message string
			Line                 int
		}
	}
	out, errOut, status := runCLI("validate", "--json", filepath.Join(dir, "bad"))
	var v found
	if err := json.Unmarshal([]byte(out), &v); err != nil || status != 1 || errOut != "" {
		t.Fatalf("validate --json of the bad directory: status %d, stdout %q (%v), stderr %q; want 1, a JSON report, nothing", status, out, err, errOut)
	}
	if v.Valid || v.Files != 4 || v.Invalid != 3 || len(v.Errors) != 4 {
		t.Errorf("validate --json of the bad directory: %+v; want invalid, 3 of 4 files, 4 errors", v)
	}
	if e := v.Errors[0]; e.File != bad || e.Line != 3 || e.Field != "jobs[0].schedule" || e.Message == "" {
		t.Errorf("its first error %+v; want %s, line 3, jobs[0].schedule, with a message", e, bad)
	}
	out, _, status = runCLI("validate", "--json", filepath.Join(dir, "good"))
	v = found{}
	if err := json.Unmarshal([]byte(out), &v); err != nil || status != 0 || !v.Valid || v.Files != 3 || v.Jobs != 4 || v.Errors == nil || len(v.Errors) != 0 {
		t.Errorf("validate --json of the good directory: status %d, %+v (%v); want 0, valid, 3 files, 4 jobs, errors []", status, v, err)
	}
}
