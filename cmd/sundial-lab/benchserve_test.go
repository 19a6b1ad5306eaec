package main

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/lab/loadtest"
	"github.com/sundial-cron/sundial/server"
	"github.com/sundial-cron/sundial/store/sqlite"
)

// The whole-server benchmark runs serve's own settings: server.Defaults,
// which serve's flags default to (cmd/sundial's TestServeDefaultsAreTheServers),
// with only what the benchmark says changed. Before, it built the settings
// by hand and ran with a task grace of 0 s and an API that accepted no
// connection.
func TestBenchServesWithServesDefaults(t *testing.T) {
	dir := t.TempDir()
	db, configs := filepath.Join(dir, "sundial.db"), filepath.Join(dir, "configs")
	opts := loadtest.Options{Sync: sqlite.SyncNormal, Workers: 64, Ahead: 500 * time.Millisecond}
	bench := benchSettings(db, configs, opts)
	want := server.Defaults(func(string) string { return "" })
	want.DB, want.Sync, want.Workers, want.Ahead = db, sqlite.SyncNormal, 64, 500*time.Millisecond
	want.Configs.Dir, want.Listen, want.Egress.URLAllow = configs, "127.0.0.1:0", []string{"127.0.0.1"}
	if !reflect.DeepEqual(bench, want) {
		t.Errorf("the benchmark runs\n%+v\nwant serve's defaults but for its own\n%+v", bench, want)
	}
	if err := bench.Check(); err != nil {
		t.Errorf("the benchmark's settings: %v", err)
	}
}
