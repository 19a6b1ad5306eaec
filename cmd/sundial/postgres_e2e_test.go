package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/store/postgres"
)

// TestPostgresShapeInstancesShareOneDatabaseAndSurviveKill9: two
// instances on one PostgreSQL database run ten every-second jobs between
// them, no occurrence twice. One is killed with -9 while
// the receiver holds a launch of it unanswered; the other goes on alone.
// A job with nothing in flight on the dead instance fires again once the
// dead one's claims are orphaned (30 s without a heartbeat); one whose
// invocation was in flight there fires again once that invocation is
// ended at its deadline (its 5 s timeout and the 30 s task grace), which
// the next minute's watchdog pass finds: so every job fires again within
// 100 s. The launch held at the kill is never made again, and ends FAILED.
// Every occurrence of the run is accounted for: launched, or recorded as
// skipped with a reason.
func TestPostgresShapeInstancesShareOneDatabaseAndSurviveKill9(t *testing.T) {
	t.Parallel()
	const jobs = 10
	url := pgtest.Shared(t).Database(t)
	recv := newReceiver(t, 400*time.Millisecond)
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "e2e", everySecond(jobs, recv.URL))
	args := []string{"--backend", "postgres", "--database-url", url, "--config-dir", configs, "--log-level", "debug"}

	a := serve(t, args...)
	// b is given one setting of those every instance must share otherwise
	// (an address no job calls): both run, and the instances say so.
	b := serve(t, append(slices.Clone(args), "--url-deny", "192.0.2.1")...)
	recv.waitFor(t, time.Minute, "five launches of every job", func(hits []hit) bool {
		return minPerJob(hits, jobs, time.Time{}) >= 5
	})
	// Which instance launches is a race, not a promise: a job's next tick
	// is enqueued by the instance that ran its last, which claims it at
	// once (its own Post wakes it), so at this light load the instance
	// that took a job first may keep it; the other takes work when the
	// first is busy or gone (below).
	for name, s := range map[string]*runningServer{"first": a, "second": b} {
		t.Logf("the %s instance launched %d times", name, strings.Count(s.log.String(), `"msg":"launched"`))
	}
	checkPostgresMetrics(t, a, b)
	checkInstances(t, a, b)

	inFlight := recv.holdNext(t, time.Minute)
	victim, survivor := a, b
	if callerOf(t, inFlight) == b.cmd.Process.Pid {
		victim, survivor = b, a
	}
	victim.kill(t)
	killed := time.Now()
	hits := recv.waitFor(t, 3*time.Minute, "every job to fire again after the kill", func(hits []hit) bool {
		return minPerJob(hits, jobs, killed) >= 1
	})
	for job, at := range firstAfter(hits, killed) {
		if late := at.Sub(killed); late > 100*time.Second {
			t.Errorf("%s fired again %v after the kill; want within 100s", job, late.Round(time.Millisecond))
		}
	}
	survivor.stop(t)

	hits, _ = recv.snapshot()
	st := accounted(t, url, jobs, onceEach(t, hits))
	defer st.Close()
	ctx := withTimeout(t, time.Minute)
	inv, err := st.Invocation(ctx, inFlight.job, invocationOf(t, ctx, st, inFlight))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Status != "FAILED" {
		t.Errorf("the launch in flight at the kill (%s %s) ended %s %q; want FAILED", inFlight.job, inFlight.scheduled, inv.Status, inv.Message)
	}
}

// checkInstances: `sundial instances` asked of a lists both instances
// alive, b's egress settings as differing, and exits 1 naming b; --json
// gives the API's answer.
func checkInstances(t *testing.T, a, b *runningServer) {
	t.Helper()
	server := []string{"--server", "http://" + a.addr}
	code, out, errOut := sundial(append([]string{"instances"}, server...)...)
	bPid := strconv.Itoa(b.cmd.Process.Pid)
	if code != 1 || strings.Count(out, " alive ") != 2 || !strings.Contains(errOut, "-"+bPid+"-") {
		t.Errorf("sundial instances = %d\n%s%s\nwant exit 1, both alive, b's differing settings named", code, out, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "-"+bPid+"-") && !strings.HasSuffix(line, "differ: egress") {
			t.Errorf("b's line %q: want its egress settings differing", line)
		}
	}
	var v struct {
		Instances []struct {
			PID            int
			Alive, Self    bool
			SettingsDiffer []string `json:"settings_differ"`
		}
	}
	code, out, _ = sundial(append([]string{"instances", "--json"}, server...)...)
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 1 || len(v.Instances) != 2 {
		t.Fatalf("sundial instances --json = %d %q (%v): want both instances, exit 1", code, out, err)
	}
	for _, in := range v.Instances {
		if in.Self != (in.PID == a.cmd.Process.Pid) || !in.Alive || (in.PID == b.cmd.Process.Pid) != slices.Equal(in.SettingsDiffer, []string{"egress"}) {
			t.Errorf("instance %+v: want a self, both alive, only b's egress differing", in)
		}
	}
}

// checkPostgresMetrics: each instance's /metrics serves its pool's
// connections, within the default bound, and the job transactions it
// committed: between them, at least the Update that committed each launch
// their logs had before the scrapes (a launch's commit comes before its
// call).
func checkPostgresMetrics(t *testing.T, instances ...*runningServer) {
	t.Helper()
	launches := float64(strings.Count(strings.Join(logsOf(instances), ""), `"msg":"launched"`))
	var updates float64
	for _, s := range instances {
		m := s.metrics(t)
		if got := m["sundial_postgres_connections_max"]; got != postgres.DefaultMaxConns {
			t.Errorf("sundial_postgres_connections_max = %v, want the default %d", got, postgres.DefaultMaxConns)
		}
		open := m[`sundial_postgres_connections{state="in_use"}`] + m[`sundial_postgres_connections{state="idle"}`] + m[`sundial_postgres_connections{state="opening"}`]
		if open < 1 || open > postgres.DefaultMaxConns {
			t.Errorf("sundial_postgres_connections add up to %v, want 1 to %d", open, postgres.DefaultMaxConns)
		}
		for _, name := range []string{"sundial_postgres_acquires_total", "sundial_postgres_connections_opened_total", "sundial_postgres_transactions_total"} {
			if m[name] < 1 {
				t.Errorf("%s = %v, want some", name, m[name])
			}
		}
		if _, ok := m["sundial_postgres_acquire_waits_total"]; !ok {
			t.Error("no sundial_postgres_acquire_waits_total")
		}
		updates += m["sundial_postgres_updates_total"]
	}
	if launches == 0 || updates < launches {
		t.Errorf("the instances committed %v Updates for %v launches, want at least one a launch", updates, launches)
	}
}

func logsOf(instances []*runningServer) []string {
	var out []string
	for _, s := range instances {
		out = append(out, s.log.String())
	}
	return out
}

// metrics scrapes the server's /metrics: each sample by its name and
// labels as the exposition format writes them.
func (s *runningServer) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s %v", resp.Status, err)
	}
	samples := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples
}

// callerOf is the process whose TCP socket made the request of h: the
// socket of h's local port, found in /proc/net/tcp, held open by a
// process whose descriptors link to it.
func callerOf(t *testing.T, h hit) int {
	t.Helper()
	_, port, err := net.SplitHostPort(h.from)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	var inode string
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], fmt.Sprintf(":%04X", p)) {
			inode = f[9]
		}
	}
	if inode == "" {
		t.Fatalf("no socket of local port %d in /proc/net/tcp", p)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		if link, err := os.Readlink(fd); err == nil && link == "socket:["+inode+"]" {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	t.Fatalf("no process holds the socket of local port %d", p)
	return 0
}

// TestMigrateAndServeOnANewerPostgresSchema: `sundial migrate --dry-run`
// prints every migration of a new database and runs none; `sundial
// migrate` runs them, and again finds nothing to run; serve on a database
// a newer release migrated exits 1, saying so and what to do, and leaves
// it as it was.
func TestMigrateAndServeOnANewerPostgresSchema(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	migrate := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := runMigrate(append([]string{"--database-url", url}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("sundial migrate %v: exit %d\n%s", args, code, stderr.String())
		}
		return stdout.String()
	}
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	want := fmt.Sprintf("%d migrations would run, to schema version %d", postgres.SchemaVersion(), postgres.SchemaVersion())
	if out := migrate("--dry-run"); !strings.Contains(out, want) || !strings.Contains(out, "-- 0001_initial.sql\n") || !strings.Contains(out, "CREATE TABLE sundial.jobs") {
		t.Errorf("migrate --dry-run of a new database printed:\n%s\nwant %q and each migration's SQL", out, want)
	}
	var schema bool
	if err := conn.QueryRow(ctx, "SELECT to_regnamespace('sundial') IS NOT NULL").Scan(&schema); err != nil || schema {
		t.Fatalf("migrate --dry-run made schema sundial (%v)", err)
	}
	if out := migrate(); !strings.Contains(out, "applied 0001_initial.sql\n") || !strings.Contains(out, fmt.Sprintf("the schema is at version %d", postgres.SchemaVersion())) {
		t.Errorf("migrate printed:\n%s", out)
	}
	if out := migrate("--dry-run"); !strings.Contains(out, "nothing to run") {
		t.Errorf("migrate --dry-run of a migrated database printed:\n%s", out)
	}

	const newer = 99
	if _, err := conn.Exec(ctx, "INSERT INTO sundial.schema_migrations (version, name) VALUES ($1, 'from_a_newer_release.sql')", newer); err != nil {
		t.Fatal(err)
	}
	configs := filepath.Join(t.TempDir(), "configs")
	mkdir(t, configs)
	var stderr bytes.Buffer
	code := runServe([]string{"--backend", "postgres", "--database-url", url, "--config-dir", configs, "--listen", "127.0.0.1:0"}, io.Discard, &stderr, time.Now)
	for _, want := range []string{
		fmt.Sprintf("migrated by a newer release of Sundial (schema version %d;", newer),
		"run the newer release, or restore the backup taken before the upgrade",
	} {
		if code != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("serve on a database of schema version %d: exit %d, log:\n%s\nwant exit 1 and %q", newer, code, stderr.String(), want)
		}
	}
	var lineage int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM sundial.lineage").Scan(&lineage); err != nil || lineage != 0 {
		t.Errorf("the refused database was written to: %d lineage records (%v)", lineage, err)
	}
}
