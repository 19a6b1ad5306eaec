package cli

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite cli/testdata/diff.md from what sundial diff prints")

// diffFrom is where every diff test's forecast starts: a Saturday, the
// day before Europe's clocks go back.
const diffFrom = "2026-10-24T00:00:00Z"

func runDiff(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errs bytes.Buffer
	code = RunDiff(args, &out, &errs, func() time.Time { t.Fatal("sundial diff read the clock despite --from"); return time.Time{} })
	return out.String(), errs.String(), code
}

// The Markdown of the diff of testdata/diff/old and new, a pull
// request's comment, is pinned by testdata/diff.md (go test ./cli -run
// TestDiffMarkdown -update rewrites it).
func TestDiffMarkdownOfTwoDirectoriesIsTheGolden(t *testing.T) {
	out, errs, code := runDiff(t, "testdata/diff/old", "testdata/diff/new", "--format", "markdown", "--herd", "10", "--from", diffFrom)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden := filepath.Join("testdata", "diff.md")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./cli -run TestDiffMarkdown -update writes it)", err)
	}
	if out != string(want) {
		t.Errorf("sundial diff --format markdown printed\n%s\nwant (%s)\n%s", out, golden, want)
	}
}

// A repo whose two commits hold testdata/diff/old and new, under
// configs/, diffs as the two directories do: the same Markdown but its
// title.
func TestDiffOfTwoRevisionsOfARepoIsTheDiffOfTheirDirectories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI on this machine")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada",
			"GIT_COMMITTER_EMAIL=ada@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for _, side := range []string{"old", "new"} {
		if err := os.RemoveAll(filepath.Join(repo, "configs")); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(filepath.Join(repo, "configs"), os.DirFS(filepath.Join("testdata", "diff", side))); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(repo, "README.md"), []byte(side), 0o644)
		git("add", "-A")
		git("commit", "-q", "-m", "the "+side+" configs")
	}
	fromRepo, errs, code := runDiff(t, "--repo", repo, "--path", "configs", "main~1", "main", "--format", "markdown", "--herd", "10", "--from", diffFrom)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	fromDirs, _, _ := runDiff(t, "testdata/diff/old", "testdata/diff/new", "--format", "markdown", "--herd", "10", "--from", diffFrom)
	body := func(s string) string { _, rest, _ := strings.Cut(s, "\n"); return rest }
	if !strings.HasPrefix(fromRepo, "## Sundial: what `main~1` → `main` does\n") || body(fromRepo) != body(fromDirs) {
		t.Errorf("the diff of the repo's revisions:\n%s\nwant the directories':\n%s", fromRepo, fromDirs)
	}
	if _, errs, code := runDiff(t, "--repo", repo, "main", "no-such-branch", "--from", diffFrom); code != ExitFailure || !strings.Contains(errs, "no-such-branch") {
		t.Errorf("a revision the repo lacks: exit %d, %q; want %d naming it", code, errs, ExitFailure)
	}
}

func TestDiffExitStatuses(t *testing.T) {
	invalid := t.TempDir()
	os.WriteFile(filepath.Join(invalid, "search.yaml"), []byte("jobs:\n  - id: x\n    schedule: \"61 * * * *\"\n    noop: {}\n"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{name: "a diff with a herd, failing on nothing", args: []string{"testdata/diff/old", "testdata/diff/new", "--herd", "10"}, code: 0},
		{name: "a herd, failing on warnings", args: []string{"testdata/diff/old", "testdata/diff/new", "--herd", "10", "--fail-on", "warning"}, code: ExitFailOn},
		{name: "no herd past the default threshold, failing on warnings", args: []string{"testdata/diff/old", "testdata/diff/new", "--fail-on", "warning"}, code: 0},
		{name: "changes, failing on changes", args: []string{"testdata/diff/old", "testdata/diff/new", "--fail-on", "change"}, code: ExitFailOn},
		{name: "a config against itself, failing on changes", args: []string{"testdata/diff/new", "testdata/diff/new", "--fail-on", "change", "--herd", "1"}, code: 0},
		{name: "an invalid config", args: []string{"testdata/diff/old", invalid}, code: ExitFailure, says: "search.yaml"},
		{name: "one side", args: []string{"testdata/diff/old"}, code: ExitUsage, says: "expected OLD and NEW"},
		{name: "a side that is no directory", args: []string{"testdata/diff/old", "main"}, code: ExitUsage, says: "--repo"},
		{name: "a bad format", args: []string{"testdata/diff/old", "testdata/diff/new", "--format", "html"}, code: ExitUsage, says: "--format"},
		{name: "a bad --fail-on", args: []string{"testdata/diff/old", "testdata/diff/new", "--fail-on", "always"}, code: ExitUsage, says: "--fail-on"},
		{name: "--path without --repo", args: []string{"testdata/diff/old", "testdata/diff/new", "--path", "x"}, code: ExitUsage, says: "--path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runDiff(t, append(c.args, "--from", diffFrom)...)
			if code != c.code || !strings.Contains(errs, c.says) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", code, errs, c.code, c.says)
			}
		})
	}
}

func TestDiffJSONAndTextSayTheSame(t *testing.T) {
	text, _, _ := runDiff(t, "testdata/diff/old", "testdata/diff/new", "--herd", "10", "--from", diffFrom)
	js, _, _ := runDiff(t, "testdata/diff/old", "testdata/diff/new", "--herd", "10", "--from", diffFrom, "--format", "json")
	for _, want := range []string{"~ search/index", `schedule: "0 4 * * *" -> "30 4 * * *"`, "- search/crawl", "+ payments/invoice-00",
		`warning: 12 launches in the second 2026-10-24T00:00:00Z (0 before), more than 10`, `payments/invoice-00 "@daily": spread it with "H 0 * * *"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the text diff lacks %q:\n%s", want, text)
		}
	}
	for _, want := range []string{`"herd_seconds": 1`, `"suggest": "H 0 * * *"`, `"change": "removed"`} {
		if !strings.Contains(js, want) {
			t.Errorf("the JSON diff lacks %q:\n%s", want, js)
		}
	}
}
