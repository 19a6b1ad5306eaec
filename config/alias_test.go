package config_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// aliasedArgv is a job whose argv names one 10 KB string n times, written
// once in the file (as the anchor big, which the first job defines and
// the others use): n × 10 KB, however few bytes the file has.
func aliasedArgv(id string, n int, first bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - id: %s\n    schedule: \"@hourly\"\n    command:\n      argv: [", id)
	if first {
		fmt.Fprintf(&b, "&big %q", strings.Repeat("A", 10_000))
	} else {
		b.WriteString("*big")
	}
	b.WriteString(strings.Repeat(", *big", n-1))
	b.WriteString("]\n")
	return b.String()
}

// allocated is how many bytes fn allocated, as the process counts them.
// It is read in tests that do not run in parallel, so nothing else
// allocates meanwhile.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Aliases count every time they are used (issue 16, finding 1): a spec
// that names a 10 KB string 9,000 times, 37 KB written, took 437 MB to
// validate and stored a 92 MB definition; many such specs in one file ran
// the server out of memory. The bounds are per spec and per file, and a
// refused file costs what its bounds allow, not what its aliases name.
func TestAliasesCannotMultiplyWhatAFileExpandsTo(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, wantErr string
	}{
		{"one spec", "jobs:\n" + aliasedArgv("big", 9000, true), "more than 262144 bytes once its aliases are expanded"},
		{"a file of specs each within the bound", "jobs:\n" + func() string {
			var b strings.Builder
			for i := range 700 { // 175 MB once expanded
				b.WriteString(aliasedArgv(fmt.Sprintf("j%d", i), 25, i == 0))
			}
			return b.String()
		}(), "the file's target settings come to more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, _, err = parseFile(t, "p.yaml", tc.yaml, allTargets()) })
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse: %v; want %q", err, tc.wantErr)
			}
			if n > 256<<20 {
				t.Errorf("Parse of a %d-byte file allocated %d MB; want under 256 (the expansion alone is 90 and 175 MB)", len(tc.yaml), n>>20)
			}
			t.Logf("%d-byte file: %d MB allocated", len(tc.yaml), n>>20)
		})
	}
}

// Aliases within the bounds are as good as the values written out.
func TestAliasesWithinTheBoundsParse(t *testing.T) {
	t.Parallel()
	_, p, err := parseFile(t, "p.yaml", "jobs:\n  - id: a\n    schedule: \"@hourly\"\n    command:\n      argv: &args [\"/bin/echo\", &w \"hello\", *w]\n  - id: b\n    schedule: \"@daily\"\n    command:\n      argv: *args\n", allTargets())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range p.Jobs {
		if got := string(j.Definition.Spec); !strings.Contains(got, `"argv":["/bin/echo","hello","hello"]`) {
			t.Errorf("%s: spec %s, want the aliases expanded", j.ID, got)
		}
	}
}

// What a file's errors come to is bounded whatever the file holds (found by
// FuzzConfigDirectory): an error quoted the value it was about whole, so a
// 100 KB string named by alias as each of 2,000 jobs made 200 MB of errors
// from a 106 KB file, kept in the project's status and logged at every
// refresh; and every job of a file of 16 MB of `- {}` had three errors.
func TestAFilesErrorsAreBounded(t *testing.T) {
	for _, tc := range []struct{ name, yaml string }{
		{"a big value named by alias", "x: &s " + strings.Repeat("A", 100_000) + "\njobs: [" + strings.Repeat("*s, ", 2000) + "*s]\n"},
		{"a big key named by alias", "x: &k " + strings.Repeat("K", 100_000) + "\njobs:\n" + strings.Repeat("  - {*k : 1}\n", 2000)},
		{"many bad jobs", "jobs:\n" + strings.Repeat("  - {}\n", 200_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, _, err = parseFile(t, "p.yaml", tc.yaml, allTargets()) })
			if err == nil {
				t.Fatal("no error")
			}
			if len(err.Error()) > 256<<10 {
				t.Errorf("a %d-byte file has %d bytes of errors; want at most 256 KB", len(tc.yaml), len(err.Error()))
			}
			t.Logf("%d-byte file: %d bytes of errors, %d MB allocated", len(tc.yaml), len(err.Error()), n>>20)
		})
	}
}
