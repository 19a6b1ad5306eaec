package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sundial-cron/sundial/lab/loadtest/measure"
)

// tableRow holds the figures the table shows, read from either report:
// `sundial-lab bench`'s has no PostgreSQL figures, which stay zero.
type tableRow struct {
	Jobs          int     `json:"jobs"`
	Minutes       int     `json:"minutes"`
	Expected      int     `json:"expected"`
	Launches      int     `json:"launches"`
	DefineSeconds float64 `json:"define_s"`
	measure.Lateness
	PeakRSSMiB         float64 `json:"peak_rss_mib"`
	PostgresPeakRSSMiB float64 `json:"postgres_peak_rss_mib"`
	PostgresPeakPSSMiB float64 `json:"postgres_peak_pss_mib"`
	CPUSeconds         float64 `json:"cpu_s"`
	PostgresCPUSeconds float64 `json:"postgres_cpu_s"`
	CPUPer1000Launches float64 `json:"cpu_s_per_1000_launches"`
}

// runTable prints one markdown table of the reports named LABEL=FILE, in
// the order given; a file that is empty or not a report (a run that
// failed before reporting) gets a row saying so.
func runTable(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: river-bench table LABEL=REPORT.json ...")
		return exitUsage
	}
	fmt.Fprintln(stdout, "| run | jobs | min | launched / expected | p50 ms | p90 ms | p99 ms | max ms | peak RSS MiB | PostgreSQL PSS (RSS) MiB | CPU s | CPU s / 1,000 launches | define s |")
	fmt.Fprintln(stdout, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, arg := range args {
		label, file, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(stderr, "river-bench table: %q: want LABEL=FILE\n", arg)
			return exitUsage
		}
		row, err := readRow(file)
		if err != nil {
			fmt.Fprintf(stdout, "| %s | %s |\n", label, strings.ReplaceAll(err.Error(), "|", "/"))
			continue
		}
		fmt.Fprintln(stdout, formatRow(label, row))
	}
	return 0
}

func readRow(file string) (tableRow, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return tableRow{}, err
	}
	var row tableRow
	if err := json.Unmarshal(b, &row); err != nil || row.Jobs == 0 {
		return tableRow{}, fmt.Errorf("no report in %s", file)
	}
	return row, nil
}

// formatRow writes one row: lateness in milliseconds, CPU as the engine's
// process plus PostgreSQL's where there is one.
func formatRow(label string, r tableRow) string {
	ms := func(s float64) string { return fmt.Sprintf("%.0f", s*1000) }
	pg, cpu := "—", fmt.Sprintf("%.1f", r.CPUSeconds)
	if r.PostgresPeakRSSMiB > 0 {
		pg = fmt.Sprintf("%.0f (%.0f)", r.PostgresPeakPSSMiB, r.PostgresPeakRSSMiB)
		cpu = fmt.Sprintf("%.1f + %.1f", r.CPUSeconds, r.PostgresCPUSeconds)
	}
	return fmt.Sprintf("| %s | %d | %d | %d / %d | %s | %s | %s | %s | %.0f | %s | %s | %.3f | %.2f |",
		label, r.Jobs, r.Minutes, r.Launches, r.Expected,
		ms(r.LatenessP50), ms(r.LatenessP90), ms(r.LatenessP99), ms(r.LatenessMax),
		r.PeakRSSMiB, pg, cpu, r.CPUPer1000Launches, r.DefineSeconds)
}
