package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// startCPUProfile profiles the whole run into path ("": none); stop ends
// the profile and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// printReport prints a verb's report as JSON and exits 1, saying broken,
// if the report is not OK.
func printReport(verb string, rep interface{ OK() bool }, broken string, stdout, stderr io.Writer) int {
	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "sundial-lab %s: %v\n", verb, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	if !rep.OK() {
		fmt.Fprintf(stderr, "sundial-lab %s: %s; see the report\n", verb, broken)
		return 1
	}
	return 0
}
