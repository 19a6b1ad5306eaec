package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// TestReadProjectsFile: each project with its repo, ref and path; a
// project listed twice, an unknown field, a bad id or a missing repo is
// an error naming the line and field.
func TestReadProjectsFile(t *testing.T) {
	t.Parallel()
	write := func(content string) string {
		p := filepath.Join(t.TempDir(), "projects.yaml")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := config.ReadProjectsFile(write("projects:\n  - id: billing\n    repo: https://example.com/billing.git\n    ref: stable\n    path: sundial\n  - id: search\n    repo: file:///srv/search\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []config.ProjectEntry{{ID: "billing", Repo: "https://example.com/billing.git", Ref: "stable", Path: "sundial"}, {ID: "search", Repo: "file:///srv/search"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v; want %+v", got, want)
	}
	for content, says := range map[string]string{
		"projects:\n  - id: billing\n    repo: https://a/x\n  - id: billing\n    repo: https://b/y\n": ":4: projects[1].id: project billing is listed twice (also at line 2)",
		"projects:\n  - id: billing\n    repo: https://a/x\n    branch: main\n":                       ":4: projects[0].branch: unknown field",
		"projects:\n  - id: Billing\n    repo: https://a/x\n":                                         ":2: projects[0].id:",
		"projects:\n  - id: billing\n":                                                                ":2: projects[0].repo: missing",
		"projects:\n  - id: billing\n    repo: ftp://a/x\n":                                           "projects[0].repo:",
		"projects: []\n": "none listed",
	} {
		if _, err := config.ReadProjectsFile(write(content)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v; want an error saying %q", content, err, says)
		}
	}
}
