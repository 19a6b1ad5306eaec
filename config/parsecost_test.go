package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// denseFile is a config of about size bytes, nearly all of them a list of
// one-character items: the most YAML values a byte can buy.
func denseFile(size int) []byte {
	head, tail := "jobs: [", "1]\n"
	return []byte(head + strings.Repeat("1,", (size-len(head)-len(tail))/2) + tail)
}

// hashedSecondsJobs is n jobs firing every 2 seconds at a hashed offset,
// each with a jitter to check against that schedule.
func hashedSecondsJobs(n int) []byte {
	var b strings.Builder
	b.WriteString("jobs:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: j%d\n    schedule: \"H/2 * * * * *\"\n    time_zone: America/New_York\n    jitter: 1s\n    noop: {}\n", i)
	}
	return []byte(b.String())
}

// TestADenseFileIsRefusedBeforeParsing (issue 36, finding 8): a 16 MiB
// file of 8 million one-character list items cost 2.9 GB and 12 s to
// parse, and was refused only then. Now the YAML items are counted from
// the bytes first, and a file with more than the bound is refused, naming
// the line that passes it, having allocated nearly nothing.
func TestADenseFileIsRefusedBeforeParsing(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"on one line", denseFile(config.MaxFileSize), "p.yaml:1: more than 2000000 YAML items by this line"},
		{"one a line", []byte("jobs:\n" + strings.Repeat("- 1\n", config.MaxFileSize/4-2)), "p.yaml:666667: more than 2000000 YAML items by this line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = config.Parse("p.yaml", tc.data, allTargets()) })
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Parse: %v; want %q", err, tc.want)
			}
			if n > 1<<20 {
				t.Errorf("refusing a %d-byte file allocated %d bytes; want under 1 MiB", len(tc.data), n)
			}
		})
	}
}

// TestManyHashedSecondsJobsValidate (issue 36, finding 8): 10,000 jobs of
// "H/2 * * * * *" with a jitter took 27 s to validate, 2.7 ms a job to
// walk 20,000 fire times each; the check's work is now bounded per
// schedule (schedule's TestShortestGapWorkIsBoundedPerSchedule counts
// it), and the whole parse allocates some KiB a job (the zone, the
// definition, the target spec).
func TestManyHashedSecondsJobsValidate(t *testing.T) {
	data := hashedSecondsJobs(10_000)
	var p *config.Project
	var err error
	n := allocated(func() { p, err = config.Parse("p.yaml", data, allTargets()) })
	if err != nil || len(p.Jobs) != 10_000 {
		t.Fatalf("Parse: %v", err)
	}
	if perJob := n / 10_000; perJob > 24<<10 {
		t.Errorf("%d bytes allocated a job; want at most 24 KiB", perJob)
	}
}

func BenchmarkParseDenseFile(b *testing.B) {
	data := denseFile(config.MaxFileSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := config.Parse("p.yaml", data, allTargets()); err == nil {
			b.Fatal("a file of 8 million list items parsed")
		}
	}
}

func BenchmarkParseHashedSecondsJobs(b *testing.B) {
	data := hashedSecondsJobs(10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := config.Parse("p.yaml", data, allTargets()); err != nil {
			b.Fatal(err)
		}
	}
}
