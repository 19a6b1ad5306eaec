package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/config"
)

// denseFile is a config of size bytes, nearly all of them a list of
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
		fmt.Fprintf(&b, "  - id: j%d\n    schedule: \"H/2 * * * * *\"\n    jitter: 1s\n    noop: {}\n", i)
	}
	return []byte(b.String())
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
