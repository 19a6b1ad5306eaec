package main

import (
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sundial-cron/sundial/tools/loadtest"
)

// The whole-server benchmark runs serve's own settings: what serve takes
// from the same flags, defaults and all, so a default changed for serve
// changes the benchmark too.
func TestBenchServesWithServesDefaults(t *testing.T) {
	for _, name := range []string{"SUNDIAL_CONFIG_REPO", "SUNDIAL_CONFIG_REF", "SUNDIAL_CONFIG_PATH", "SUNDIAL_CONFIG_GOOGLE_AUTH", "SUNDIAL_CONFIG_LINK",
		"GOOGLE_CLOUD_PROJECT", "GAE_ENV", "K_SERVICE", "SUNDIAL_TASKS_QUEUE", "SUNDIAL_TASKS_LOCATION", "SUNDIAL_URL", "SUNDIAL_INVOKER", "SUNDIAL_NAMESPACE", "PORT"} {
		t.Setenv(name, "")
	}
	dir := t.TempDir()
	db, configs := filepath.Join(dir, "sundial.db"), filepath.Join(dir, "configs")
	bench := benchSettings(db, configs, loadtest.Options{})
	if err := bench.Check(); err != nil {
		t.Fatalf("the benchmark's settings: %v", err)
	}
	serve, err := parseServe([]string{"--db", db, "--config-dir", configs, "--listen", "127.0.0.1:0", "--url-allow", "127.0.0.1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(bench, serve) {
		t.Errorf("the benchmark runs\n%+v\nserve with the same flags runs\n%+v", bench, serve)
	}
}
