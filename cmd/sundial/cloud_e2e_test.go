package main

import (
	"encoding/json"
	"fmt"
	"github.com/sundial-cron/sundial/server"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
	"github.com/sundial-cron/sundial/watchdog"
)

// The cloud shape served on one machine: Datastore on its emulator, Cloud
// Tasks played by cloudtaskstest (real HTTP deliveries to the app's task
// endpoint with App Engine's headers), and the cron endpoints called as App
// Engine cron calls them. One task's create is acknowledged and then lost,
// and one tick that launches its occurrence (and so stands for its
// StartInvocation) is delivered twice at once: no occurrence reaches
// the receiver twice, and the watchdog repairs the job whose tick was lost,
// which then fires again. Outside requests to the internal endpoints are
// refused.
func TestCloudShapeSurvivesLostAndRepeatedTasks(t *testing.T) {
	t.Parallel()
	emulatortest.Datastore(t) // the server inherits DATASTORE_EMULATOR_HOST
	recv := newReceiver(t, 0)
	appURL := "http://" + freeAddr(t)

	var mu sync.Mutex
	var lostAt time.Time
	ticksOfLost, twiceDone := 0, false
	ts, err := cloudtaskstest.Start(cloudtaskstest.Options{Now: time.Now, AppEngineURL: appURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	// Lose the third tick of job "lost": by then it has fired, and nothing
	// but the watchdog will make it fire again.
	ts.Lose(func(task *cloudtaskspb.Task) bool {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(task.Name, "cloud-lost-tick-") || !lostAt.IsZero() {
			return false
		}
		if ticksOfLost++; ticksOfLost < 3 {
			return false
		}
		lostAt = time.Now()
		return true
	})
	ts.Twice(func(task *cloudtaskspb.Task) bool {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(task.Name, "cloud-twice-tick-") || twiceDone {
			return false
		}
		twiceDone = true
		return true
	})
	go ts.Run(t.Context())

	configs := filepath.Join(t.TempDir(), "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "cloud", fmt.Sprintf(`jobs:
  - id: lost
    schedule: "* * * * * *"
    url_fetch: {url: %[1]s/lost}
  - id: twice
    schedule: "* * * * * *"
    url_fetch: {url: %[1]s/twice}
`, recv.URL))
	s := serve(t, "--backend", "cloud", "--platform", "appengine",
		"--gcp-project", "sundial-e2e", "--namespace", fmt.Sprintf("e2e-%d", time.Now().UnixNano()),
		"--tasks-location", "us-central1", "--tasks-queue", "sundial-tasks", "--tasks-endpoint", ts.Addr(),
		"--listen", strings.TrimPrefix(appURL, "http://"), "--config-dir", configs,
		"--url-allow", "127.0.0.1", "--task-grace", "2s")

	for _, path := range []string{server.TasksPath, server.WatchdogPath, server.RefreshPath} {
		if code := post(t, appURL+path, nil); code != http.StatusForbidden {
			t.Errorf("an outside request to %s: %d; want 403", path, code)
		}
	}

	// App Engine cron, every second instead of every minute.
	var repaired int
	cron := func() (migrated bool) {
		cronCall(t, appURL+server.RefreshPath, nil)
		var res struct {
			watchdog.Result
			ExpiryMigration struct {
				Done bool `json:"done"`
			} `json:"expiry_migration"`
		}
		cronCall(t, appURL+server.WatchdogPath, &res)
		mu.Lock()
		repaired += res.Repaired
		mu.Unlock()
		return res.ExpiryMigration.Done
	}
	// The expiry migration runs in the watchdog's cron: in a new
	// database it has nothing to do, and its first call says so.
	if !cron() {
		t.Error("the first watchdog cron did not report the expiry migration done in a new database")
	}
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-t.Context().Done():
				return
			case <-tick.C:
				cron()
			}
		}
	}()

	recv.waitFor(t, time.Minute, "job lost to fire again after its tick was lost, and job twice to fire", func(hits []hit) bool {
		mu.Lock()
		at := lostAt
		mu.Unlock()
		return !at.IsZero() && hitPath("/lost", at)(hits) && hitPath("/twice", time.Time{})(hits)
	})
	waitUntil(t, time.Minute, "the repeated delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return twiceDone
	})
	// The pass that repaired the job answers after the repaired tick has
	// run, so its count may come in after the hit.
	waitUntil(t, time.Minute, "a watchdog pass to report its repair", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return repaired > 0
	})
	s.stop(t)

	hits, _ := recv.snapshot()
	seen := map[string]bool{}
	for _, h := range hits {
		occ := h.job + " " + h.scheduled
		if seen[occ] {
			t.Errorf("occurrence %s reached the receiver twice", occ)
		}
		seen[occ] = true
	}
	var twiceDeliveries int
	for _, d := range ts.Deliveries() {
		if strings.Contains(d.Task, "cloud-twice-tick-") {
			twiceDeliveries++
		}
	}
	if n := len(seen); n < 4 || twiceDeliveries < 2 {
		t.Errorf("%d occurrences reached the receiver and %d tick deliveries of job twice; the test did not exercise what it means to", n, twiceDeliveries)
	}
}

// freeAddr returns a loopback address no one listens on, for a server
// whose address must be known before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// post sends an empty POST from outside and returns the status.
func post(t *testing.T, url string, header http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// cronCall calls a cron endpoint as App Engine cron does and decodes its
// answer into out, if out is not nil.
func cronCall(t *testing.T, url string, out any) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Error(err)
		return
	}
	req.Header.Set("X-Appengine-Cron", "true")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return // the server is stopping
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("cron %s: %s", url, resp.Status)
		return
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Errorf("cron %s: %v", url, err)
		}
	}
}
