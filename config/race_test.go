//go:build race

package config_test

// raceDetector says the tests run under the race detector, whose shadow
// memory a process's peak would measure rather than the read's.
const raceDetector = true
