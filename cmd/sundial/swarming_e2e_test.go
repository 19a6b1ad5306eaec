package main

import (
	"encoding/json"
	"fmt"
	"github.com/sundial-cron/sundial/server"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/targets/swarming/swarmingtest"
	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
)

// swarmingSetup is a server running one swarming job, p/build, against a
// stand-in Swarming that pushes Swarming task ends to the server's push
// endpoint.
type swarmingSetup struct {
	swarm *swarmingtest.Server
	args  []string
	s     *runningServer
}

const buildInvocation = "/api/v1/projects/p/jobs/build/invocations/manual-1"

// startSwarming writes p's config, with the job's Swarming tasks in pool,
// and starts the server with polls from pollMin to pollMax.
func startSwarming(t *testing.T, pool string, pollMin, pollMax time.Duration) *swarmingSetup {
	t.Helper()
	return startSwarmingWith(t, pool, pollMin, pollMax)
}

// startSwarmingWith is startSwarming with more flags for the server.
func startSwarmingWith(t *testing.T, pool string, pollMin, pollMax time.Duration, more ...string) *swarmingSetup {
	t.Helper()
	dir := t.TempDir()
	configs := filepath.Join(dir, "configs")
	mkdir(t, configs)
	swarm := swarmingtest.New()
	t.Cleanup(swarm.Close)
	writeConfig(t, configs, "p", fmt.Sprintf(`jobs:
  - id: build
    schedule: "0 0 1 1 *"
    timeout: 30m
    swarming:
      server: %s
      realm: acme:ci
      pool: %s
      dimensions: {os: Linux}
      command: [python3, build.py]
      execution_timeout: 20m
`, swarm.URL, pool))
	secret := filepath.Join(dir, "push-secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("k", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := &swarmingSetup{swarm: swarm, args: []string{
		"--db", filepath.Join(dir, "sundial.db"), "--config-dir", configs,
		"--swarming-realms", "p=acme:*", "--swarming-servers", "http://127.0.0.1",
		"--swarming-pubsub-topic", "projects/acme/topics/swarming",
		"--push-secret-file", secret,
		"--poll-min", pollMin.String(), "--poll-max", pollMax.String(),
	}}
	st.args = append(st.args, more...)
	st.start(t)
	return st
}

// start starts (or restarts) the server and points the stand-in's pushes
// at it.
func (st *swarmingSetup) start(t *testing.T) {
	t.Helper()
	st.s = serve(t, st.args...)
	st.swarm.PushTo("http://" + st.s.addr + "/internal/push")
	waitForJob(t, st.s, "p", "build")
}

func (st *swarmingSetup) trigger(t *testing.T) {
	t.Helper()
	if code := post(t, "http://"+st.s.addr+"/api/v1/projects/p/jobs/build/trigger", nil); code != http.StatusAccepted {
		t.Fatalf("trigger: %d", code)
	}
}

// invocation reads manual-1 from the API.
func (st *swarmingSetup) invocation(t *testing.T) invocationView {
	t.Helper()
	resp, err := http.Get("http://" + st.s.addr + buildInvocation)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var inv invocationView
	if resp.StatusCode == http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&inv)
	}
	return inv
}

func (st *swarmingSetup) waitStatus(t *testing.T, status string) invocationView {
	t.Helper()
	var inv invocationView
	waitUntil(t, time.Minute, "manual-1 to be "+status, func() bool {
		inv = st.invocation(t)
		return inv.Status == status
	})
	return inv
}

// task waits for the stand-in's one Swarming task.
func (st *swarmingSetup) task(t *testing.T) swarmingtest.Task {
	t.Helper()
	waitUntil(t, time.Minute, "a Swarming task on the stand-in", func() bool { return len(st.swarm.Tasks()) > 0 })
	tasks := st.swarm.Tasks()
	if len(tasks) != 1 {
		t.Fatalf("the stand-in has %d Swarming tasks; want 1", len(tasks))
	}
	return tasks[0]
}

func TestSwarmingJobEndsByPush(t *testing.T) {
	t.Parallel()
	// Polls an hour apart: only the push can end it within the test.
	st := startSwarming(t, "ci", time.Hour, time.Hour)
	st.trigger(t)
	task := st.task(t)
	st.waitStatus(t, "RUNNING")
	if err := st.swarm.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.swarm.Finish(task.ID, "COMPLETED", 0); err != nil {
		t.Fatalf("the push was refused: %v", err)
	}
	inv := st.waitStatus(t, "SUCCEEDED")
	if !strings.Contains(inv.Message, task.ID) || !strings.Contains(inv.Message, "COMPLETED, exit code 0") {
		t.Errorf("message %q; want the Swarming task id and its state", inv.Message)
	}
	if got := st.swarm.Tasks()[0]; got.Pushes != 1 || got.Request.RequestUUID == "" || !strings.Contains(strings.Join(got.Request.Tags, ","), "sundial_invocation:p/build/manual-1") {
		t.Errorf("Swarming task %+v; want one push, a request_uuid and Sundial's tags", got)
	}
	st.s.stop(t)
}

func TestSwarmingJobWhosePushIsLostEndsByPoll(t *testing.T) {
	t.Parallel()
	st := startSwarming(t, "ci", time.Second, 2*time.Second)
	st.swarm.DropPushes(true)
	st.trigger(t)
	task := st.task(t)
	st.waitStatus(t, "RUNNING")
	if err := st.swarm.Finish(task.ID, "TIMED_OUT", 0); err != nil {
		t.Fatal(err)
	}
	inv := st.waitStatus(t, "FAILED")
	if !strings.Contains(inv.Message, "TIMED_OUT") {
		t.Errorf("message %q; want the Swarming task's state", inv.Message)
	}
	if n := st.swarm.Calls("ListTasks"); n < 1 {
		t.Errorf("ListTasks called %d times; want the polls that found the end", n)
	}
	st.s.stop(t)
}

func TestSwarmingLaunchKilledMidwayIsOneTaskAfterRestart(t *testing.T) {
	t.Parallel()
	st := startSwarming(t, "ci", time.Second, 2*time.Second)
	made := st.swarm.HoldAnswer("ci")
	st.trigger(t)
	select {
	case <-made:
	case <-time.After(time.Minute):
		t.Fatal("no NewTask within a minute")
	}
	// The Swarming task exists; its answer never reached Sundial, which
	// dies now.
	st.s.kill(t)
	st.start(t)
	st.waitStatus(t, "RUNNING")
	task := st.task(t)
	if err := st.swarm.Finish(task.ID, "COMPLETED", 0); err != nil {
		t.Fatal(err)
	}
	st.waitStatus(t, "SUCCEEDED")
	if n := len(st.swarm.Tasks()); n != 1 {
		t.Errorf("the stand-in has %d Swarming tasks; want 1: the launch after the restart found the first", n)
	}
	st.s.stop(t)
}

func TestSwarmingAbortCancelsTheTask(t *testing.T) {
	t.Parallel()
	st := startSwarming(t, "ci", time.Hour, time.Hour)
	st.trigger(t)
	task := st.task(t)
	st.waitStatus(t, "RUNNING")
	if err := st.swarm.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	if code := post(t, "http://"+st.s.addr+buildInvocation+"/abort", nil); code/100 != 2 {
		t.Fatalf("abort: %d", code)
	}
	st.waitStatus(t, "ABORTED")
	waitUntil(t, time.Minute, "the Swarming task to be KILLED", func() bool { return st.swarm.Tasks()[0].State == "KILLED" })
	st.s.stop(t)
}

// With --push-oidc-account, a push with the attempt's token but without
// the subscription's OIDC token is refused, and the end waits for a poll.
func TestSwarmingPushWithoutTheSubscriptionsOIDCTokenIsRefused(t *testing.T) {
	t.Parallel()
	st := startSwarmingWith(t, "ci", time.Hour, time.Hour,
		"--push-oidc-account", "pubsub-push@acme.iam.gserviceaccount.com", "--public-url", "https://sundial.example.com")
	st.trigger(t)
	task := st.task(t)
	st.waitStatus(t, "RUNNING")
	if err := st.swarm.Finish(task.ID, "COMPLETED", 0); err == nil || !strings.Contains(err.Error(), "HTTP 403") {
		t.Fatalf("the push = %v; want it refused with 403", err)
	}
	if inv := st.invocation(t); inv.Status != "RUNNING" {
		t.Errorf("after a refused push the invocation is %s; want RUNNING", inv.Status)
	}
	st.s.stop(t)
}

// The cloud shape polls through Cloud Tasks (cloudtaskstest delivering to
// the app's task endpoint): a swarming job whose push is lost ends by a
// poll task, and only then does its next occurrence launch a second
// Swarming task.
func TestSwarmingCloudShapeEndsByPollTask(t *testing.T) {
	t.Parallel()
	emulatortest.Datastore(t)
	appURL := "http://" + freeAddr(t)
	ts, err := cloudtaskstest.Start(cloudtaskstest.Options{Now: time.Now, AppEngineURL: appURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	go ts.Run(t.Context())
	swarm := swarmingtest.New()
	t.Cleanup(swarm.Close)

	configs := filepath.Join(t.TempDir(), "configs")
	mkdir(t, configs)
	writeConfig(t, configs, "cloud", fmt.Sprintf(`jobs:
  - id: build
    schedule: "* * * * * *"
    swarming:
      server: %s
      realm: acme:ci
      pool: ci
      command: [python3, build.py]
`, swarm.URL))
	s := serve(t, "--backend", "cloud", "--platform", "appengine",
		"--gcp-project", "sundial-e2e", "--namespace", fmt.Sprintf("e2e-swarming-%d", time.Now().UnixNano()),
		"--tasks-location", "us-central1", "--tasks-queue", "sundial-tasks", "--tasks-endpoint", ts.Addr(),
		"--listen", strings.TrimPrefix(appURL, "http://"), "--config-dir", configs,
		"--swarming-realms", "cloud=acme:*", "--swarming-servers", "http://127.0.0.1", "--poll-min", "1s", "--poll-max", "2s")
	cronCall(t, appURL+server.RefreshPath, nil)

	waitUntil(t, time.Minute, "the first Swarming task", func() bool { return len(swarm.Tasks()) > 0 })
	first := swarm.Tasks()[0]
	if err := swarm.Finish(first.ID, "COMPLETED", 0); err != nil { // no topic: nothing is pushed
		t.Fatal(err)
	}
	waitUntil(t, time.Minute, "a second Swarming task, once a poll found the first ended", func() bool { return len(swarm.Tasks()) > 1 })
	s.stop(t)
	var polls int
	for _, d := range ts.Deliveries() {
		if strings.Contains(d.Task, "-poll-") {
			polls++
		}
	}
	if polls == 0 {
		t.Errorf("no poll task was delivered by Cloud Tasks; deliveries: %v", ts.Deliveries())
	}
	if n := swarm.Calls("NewTask"); n != len(swarm.Tasks()) {
		t.Errorf("%d NewTask calls made %d Swarming tasks; want one each: overlap skip launches nothing while one runs", n, len(swarm.Tasks()))
	}
}
