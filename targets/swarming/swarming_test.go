package swarming_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/swarming"
)

func req(f *farSide, inv string, attempt int) targets.Request {
	return targets.Request{
		Key: "p/job/" + inv, JobID: "p/job", Invocation: inv, Attempt: attempt,
		Occurrence: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
		Spec:       spec(f.swarming.URL, "ci"),
	}
}

func TestLaunchAgainIsDeduplicatedByRequestUUID(t *testing.T) {
	t.Parallel()
	f, tgt := farSideOf(t), newTarget(t)
	first := req(f, "inv-1", 1)
	for range 3 {
		if res := tgt.Launch(t.Context(), first); res.Status != targets.Running {
			t.Fatalf("Launch = %v %q; want Running", res.Status, res.Message)
		}
	}
	if n := len(f.swarming.Tasks()); n != 1 {
		t.Fatalf("three launches of one attempt made %d tasks; want 1", n)
	}
	// The next attempt is another Swarming task.
	if res := tgt.Launch(t.Context(), req(f, "inv-1", 2)); res.Status != targets.Running {
		t.Fatalf("Launch of attempt 2 = %v %q; want Running", res.Status, res.Message)
	}
	if n := len(f.swarming.Tasks()); n != 2 {
		t.Fatalf("attempt 2 made %d tasks in all; want 2", n)
	}
}

func TestLaunchRetriesAnUnansweredNewTaskWithTheSameRequestUUID(t *testing.T) {
	t.Parallel()
	f, tgt := farSideOf(t), newTarget(t)
	f.swarming.FailNext("NewTask", 2)
	if res := tgt.Launch(t.Context(), req(f, "inv-1", 1)); res.Status != targets.Running {
		t.Fatalf("Launch = %v %q; want Running after two UNAVAILABLE answers", res.Status, res.Message)
	}
	if n, calls := len(f.swarming.Tasks()), f.swarming.Calls("NewTask"); n != 1 || calls != 3 {
		t.Fatalf("%d tasks from %d NewTask calls; want 1 from 3", n, calls)
	}
	f.swarming.FailNext("NewTask", 3)
	if res := tgt.Launch(t.Context(), req(f, "inv-2", 1)); res.Status != targets.Failed || !strings.Contains(res.Message, "unavailable") {
		t.Fatalf("Launch with Swarming down = %v %q; want Failed saying why", res.Status, res.Message)
	}
}

func TestTaskRequestCarriesTheSpecAndSundialsTags(t *testing.T) {
	t.Parallel()
	f, tgt := farSideOf(t), newTarget(t)
	r := req(f, "inv-1", 2)
	r.Spec = json.RawMessage(`{"server": "` + f.swarming.URL + `", "realm": "acme:ci", "pool": "ci", "dimensions": {"os": "Linux"},
		"command": ["python3", "run.py"], "relative_cwd": "src", "env": {"A": "1"}, "tags": ["team:billing"],
		"priority": 30, "execution_timeout": "20m", "expiration": "5m", "service_account": "bot"}`)
	if res := tgt.Launch(t.Context(), r); res.Status != targets.Running {
		t.Fatalf("Launch = %v %q; want Running", res.Status, res.Message)
	}
	task := taskOf(t, f.swarming, r)
	got := task.Request
	wantTags := []string{
		"sundial_attempt:2", "sundial_invocation:p/job/inv-1", "sundial_job:p/job",
		"sundial_request:" + swarming.RequestUUID(r), "sundial_scheduled:2026-11-24T12:00:00Z", "team:billing",
	}
	p := got.TaskSlices[0].Properties
	switch {
	case !slices.Equal(got.Tags, wantTags):
		t.Errorf("tags = %q; want %q", got.Tags, wantTags)
	case got.RequestUUID != swarming.RequestUUID(r) || got.Realm != "acme:ci" || got.Priority != 30 || got.ServiceAccount != "bot":
		t.Errorf("request = %+v", got)
	case got.PubSubTopic != topic || !targets.ValidPushToken(secret, targets.RefOf(r), got.PubSubAuthToken):
		t.Errorf("pubsub topic %q token %q; want %q and the attempt's token", got.PubSubTopic, got.PubSubAuthToken, topic)
	case task.Pool() != "ci" || len(p.Dimensions) != 2 || p.Dimensions[0].Key != "os" || p.RelativeCwd != "src":
		t.Errorf("properties = %+v", p)
	case p.ExecutionTimeoutSecs != 1200 || got.TaskSlices[0].ExpirationSecs != 300:
		t.Errorf("execution timeout %ds, expiration %ds; want 1200 and 300", p.ExecutionTimeoutSecs, got.TaskSlices[0].ExpirationSecs)
	}
}

func TestEveryFinalStateIsAnOutcomeThatSaysIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state string
		code  int
		want  targets.Status
		msg   string
	}{
		{"COMPLETED", 0, targets.Succeeded, "COMPLETED, exit code 0"},
		{"COMPLETED", 3, targets.Failed, "COMPLETED, exit code 3"},
		{"TIMED_OUT", 0, targets.Failed, "TIMED_OUT"},
		{"BOT_DIED", 0, targets.Failed, "BOT_DIED"},
		{"EXPIRED", 0, targets.Failed, "EXPIRED"},
		{"CANCELED", 0, targets.Failed, "CANCELED"},
		{"KILLED", 0, targets.Failed, "KILLED"},
		{"NO_RESOURCE", 0, targets.Failed, "NO_RESOURCE"},
		{"CLIENT_ERROR", 0, targets.Failed, "CLIENT_ERROR"},
	} {
		t.Run(tc.state, func(t *testing.T) {
			t.Parallel()
			f, tgt := farSideOf(t), newTarget(t)
			r := req(f, "inv-1", 1)
			tgt.Launch(t.Context(), r)
			id := taskOf(t, f.swarming, r).ID
			if err := f.swarming.Finish(id, tc.state, tc.code); err != nil {
				t.Fatal(err)
			}
			launched, res, err := tgt.Resolve(t.Context(), r)
			if err != nil || !launched || res.Status != tc.want || !strings.HasSuffix(res.Message, tc.msg) || !strings.Contains(res.Message, id) {
				t.Errorf("Resolve = %v, %v %q, %v; want %v ending %q and naming task %s", launched, res.Status, res.Message, err, tc.want, tc.msg, id)
			}
		})
	}
}

func TestAbortKillsARunningTask(t *testing.T) {
	t.Parallel()
	f, tgt := farSideOf(t), newTarget(t)
	r := req(f, "inv-1", 1)
	tgt.Launch(t.Context(), r)
	if err := f.swarming.Start(taskOf(t, f.swarming, r).ID); err != nil {
		t.Fatal(err)
	}
	if err := tgt.Abort(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if st := taskOf(t, f.swarming, r).State; st != "KILLED" {
		t.Errorf("the task is %s after Abort; want KILLED (kill_running)", st)
	}
}

func TestARealmIsUsedOnlyByTheProjectsGrantedIt(t *testing.T) {
	t.Parallel()
	tgt, err := swarming.New(swarming.Options{Servers: []string{"https://s.example.com"}, Grants: []swarming.RealmGrant{
		{Project: "billing", Realm: "acme:billing"}, {Project: "infra", Realm: "chrome", Any: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := func(realm string) json.RawMessage {
		return json.RawMessage(`{"server": "https://s.example.com", "realm": "` + realm + `", "pool": "ci", "command": ["x"]}`)
	}
	for _, tc := range []struct {
		project, realm string
		ok             bool
	}{
		{"billing", "acme:billing", true},
		{"billing", "acme:infra", false},
		{"infra", "chrome:ci", true},
		{"infra", "chromeos:ci", false},
		{"other", "acme:billing", false},
	} {
		field, err := tgt.CheckFor(tc.project, s(tc.realm))
		if (err == nil) != tc.ok || !tc.ok && field != "realm" {
			t.Errorf("CheckFor(%s, %s) = %q, %v; want ok %v, else the realm field", tc.project, tc.realm, field, err, tc.ok)
		}
	}
	for _, bad := range []string{"billing", "billing=", "billing=acme", "billing=*", "billing=ACME:x"} {
		if _, err := swarming.ParseRealmGrant(bad); err == nil {
			t.Errorf("ParseRealmGrant(%q) = nil; want an error", bad)
		}
	}
	if g, err := swarming.ParseRealmGrant("infra=chrome:*"); err != nil || g != (swarming.RealmGrant{Project: "infra", Realm: "chrome", Any: true}) {
		t.Errorf("ParseRealmGrant(infra=chrome:*) = %+v, %v", g, err)
	}
}

// The target sends the service's credentials to the servers it calls, so
// it calls only those the operator listed: a config naming another is
// refused at load, naming the server field, and a launch under it makes
// no request at all.
func TestOnlyListedServersAreCalled(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "not a Swarming server", http.StatusNotFound)
	}))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	grants := []swarming.RealmGrant{{Project: "p", Realm: "acme", Any: true}}
	for _, servers := range [][]string{nil, {"https://swarming.example.com"}, {"http://127.0.0.1:1"}, {"https://" + u.Host}} {
		tgt, err := swarming.New(swarming.Options{Servers: servers, Grants: grants})
		if err != nil {
			t.Fatal(err)
		}
		if field, err := tgt.CheckFor("p", spec(srv.URL, "ci")); err == nil || field != "server" {
			t.Errorf("servers %q: CheckFor of %s = %q, %v; want an error naming the server field", servers, srv.URL, field, err)
		}
		res := tgt.Launch(t.Context(), targets.Request{Key: "p/j/1", JobID: "p/j", Invocation: "1", Attempt: 1, Spec: spec(srv.URL, "ci")})
		if res.Status != targets.Failed || !strings.Contains(res.Message, "--swarming-servers") {
			t.Errorf("servers %q: Launch = %+v; want failed, naming --swarming-servers", servers, res)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server no one listed got %d requests; want none", n)
	}
	for _, listed := range []string{"http://127.0.0.1", "http://127.0.0.1:" + u.Port()} {
		tgt, err := swarming.New(swarming.Options{Servers: []string{listed}, Grants: grants})
		if err != nil {
			t.Fatal(err)
		}
		if field, err := tgt.CheckFor("p", spec(srv.URL, "ci")); err != nil {
			t.Errorf("listed %s: CheckFor of %s = %q, %v; want nil", listed, srv.URL, field, err)
		}
	}
	if _, err := swarming.New(swarming.Options{Servers: []string{"http://swarming.example.com"}}); err == nil {
		t.Error("New listing a plain-http server that is not loopback succeeded; want an error")
	}
}
