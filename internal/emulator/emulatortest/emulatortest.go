// Package emulatortest gives tests a Cloud Datastore emulator and a Cloud
// Pub/Sub emulator. A test package calls Main (or Run) from its TestMain and
// Datastore (or PubSub) from each test that needs the emulator: the first
// such test starts one emulator for the whole package, on a free loopback
// port (the Datastore one requiring the indexes of the repository's
// index.yaml), and Main stops it when the tests end. It is apart
// from package emulator so that the binary does not link package testing.
package emulatortest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/emulator"
)

// EnvRequire, set to 1, makes a missing emulator fail the tests that need it
// instead of skipping them (CI sets it).
const EnvRequire = "SUNDIAL_REQUIRE_EMULATOR"

var (
	once    sync.Once
	running *emulator.Process
	host    string
	failed  error

	pubsubOnce    sync.Once
	pubsubRunning *emulator.Process
	pubsubHost    string
	pubsubFailed  error
)

// Main runs the package's tests and stops the emulator if one was started.
// Call it from TestMain.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main for a TestMain that has more to clean up: it runs the tests,
// stops the emulator if one was started, and returns the exit code.
func Run(m *testing.M) int {
	code := m.Run()
	if running != nil {
		if err := running.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the Datastore emulator:", err)
		}
	}
	if pubsubRunning != nil {
		if err := pubsubRunning.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the Pub/Sub emulator:", err)
		}
	}
	return code
}

// Datastore returns the host:port of a Datastore emulator, starting one
// the first time it is asked, and sets DATASTORE_EMULATOR_HOST so the
// Datastore client connects to it. Without an emulator it skips t, or
// fails it when SUNDIAL_REQUIRE_EMULATOR=1.
func Datastore(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if host = os.Getenv(emulator.EnvHost); host != "" {
			return
		}
		root, err := moduleRoot()
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			running, err = emulator.Start(ctx, filepath.Join(root, "index.yaml"))
		}
		if err != nil {
			failed = err
			return
		}
		host = running.Host
		failed = os.Setenv(emulator.EnvHost, host)
	})
	unavailable(t, "Datastore", failed)
	return host
}

// PubSub returns the host:port of a Pub/Sub emulator, starting one the first
// time it is asked, and sets PUBSUB_EMULATOR_HOST so the Pub/Sub client
// connects to it. Without an emulator it skips t, or fails it when
// SUNDIAL_REQUIRE_EMULATOR=1.
func PubSub(t testing.TB) string {
	t.Helper()
	pubsubOnce.Do(func() {
		if pubsubHost = os.Getenv(emulator.EnvPubSubHost); pubsubHost != "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pubsubRunning, pubsubFailed = emulator.StartPubSub(ctx)
		if pubsubFailed != nil {
			return
		}
		pubsubHost = pubsubRunning.Host
		pubsubFailed = os.Setenv(emulator.EnvPubSubHost, pubsubHost)
	})
	unavailable(t, "Pub/Sub", pubsubFailed)
	return pubsubHost
}

// unavailable skips t when the named emulator could not be started (err),
// or fails it when SUNDIAL_REQUIRE_EMULATOR=1 (CI).
func unavailable(t testing.TB, name string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s emulator (required by %s=1): %v", name, EnvRequire, err)
	}
	t.Skipf("no %s emulator: %v", name, err)
}

// moduleRoot is the directory of the go.mod above the working directory:
// tests run in their package's directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
