package swarming_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/swarming"
	"github.com/sundial-cron/sundial/targets/swarming/swarmingtest"
	"github.com/sundial-cron/sundial/targets/targettest"
)

// secret is the push tokens' secret of every test.
var secret = []byte("swarming test secret")

// topic is where the tests' Swarming tasks are pushed from.
const topic = "projects/acme/topics/swarming-updates"

// farSide is one test's stand-in Swarming and the receiver of its pushes.
type farSide struct {
	swarming *swarmingtest.Server

	mu      sync.Mutex
	valid   []targets.PushRef
	invalid int
}

var (
	farSidesMu sync.Mutex
	farSides   = map[*testing.T]*farSide{}
)

// farSideOf returns t's far side, starting it the first time t asks: the
// harness's funcs of one subtest share it, and no two subtests do.
func farSideOf(t *testing.T) *farSide {
	t.Helper()
	farSidesMu.Lock()
	defer farSidesMu.Unlock()
	if f := farSides[t]; f != nil {
		return f
	}
	f := &farSide{swarming: swarmingtest.New()}
	recv := httptest.NewServer(http.HandlerFunc(f.receive))
	f.swarming.PushTo(recv.URL)
	f.swarming.NoBots("no-bots")
	farSides[t] = f
	t.Cleanup(func() {
		f.swarming.Close()
		recv.Close()
		farSidesMu.Lock()
		delete(farSides, t)
		farSidesMu.Unlock()
	})
	return f
}

// receive takes a push as a Pub/Sub push subscription delivers Swarming's
// message, and counts it by whether its token is valid for its ref.
func (f *farSide) receive(w http.ResponseWriter, r *http.Request) {
	var env struct {
		Message struct {
			Data       string            `json:"data"`
			Attributes map[string]string `json:"attributes"`
		} `json:"message"`
	}
	var msg struct {
		TaskID   string `json:"task_id"`
		Userdata string `json:"userdata"`
	}
	if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	data, err := base64.StdEncoding.DecodeString(env.Message.Data)
	if err == nil {
		err = json.Unmarshal(data, &msg)
	}
	ref, refErr := targets.DecodePushRef(msg.Userdata)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil || refErr != nil || !targets.ValidPushToken(secret, ref, env.Message.Attributes["auth_token"]) {
		f.invalid++
		return
	}
	f.valid = append(f.valid, ref)
}

func newTarget(t *testing.T) *swarming.Target {
	t.Helper()
	tgt, err := swarming.New(swarming.Options{
		Client:      http.DefaultClient,
		Servers:     []string{"http://127.0.0.1"},
		Grants:      []swarming.RealmGrant{{Project: "p", Realm: "acme", Any: true}},
		PubSubTopic: topic,
		PushToken:   func(ref targets.PushRef) string { return targets.PushToken(secret, ref) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return tgt
}

func spec(server, pool string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"server": %q, "realm": "acme:ci", "pool": %q, "command": ["python3", "run.py"]}`, server, pool))
}

// taskOf is the stand-in's Swarming task of an attempt, found by its tags.
func taskOf(t *testing.T, s *swarmingtest.Server, req targets.Request) swarmingtest.Task {
	t.Helper()
	var found []swarmingtest.Task
	for _, task := range s.Tasks() {
		for _, tag := range task.Request.Tags {
			if tag == "sundial_request:"+swarming.RequestUUID(req) {
				found = append(found, task)
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("the stand-in has %d tasks of %s#%d; want 1", len(found), req.Key, req.Attempt)
	}
	return found[0]
}

func TestConformance(t *testing.T) {
	t.Parallel()
	targettest.Run(t, targettest.Harness{
		New:        func(t *testing.T) targets.Target { return newTarget(t) },
		Succeeding: func(t *testing.T) json.RawMessage { return spec(farSideOf(t).swarming.URL, "ci") },
		Launched:   targets.Running,
		// A Swarming task no bot can run is NO_RESOURCE at once.
		Failing: func(t *testing.T) json.RawMessage { return spec(farSideOf(t).swarming.URL, "no-bots") },
		Hang: func(t *testing.T) (json.RawMessage, <-chan struct{}) {
			s := farSideOf(t).swarming
			pool := fmt.Sprintf("held-%d", s.Calls("NewTask")+len(s.Tasks()))
			return spec(s.URL, pool), s.Hold(pool)
		},
		Witness: func(t *testing.T) (json.RawMessage, func() []string) {
			s := farSideOf(t).swarming
			return spec(s.URL, "witnessed"), func() []string {
				var keys []string
				for _, task := range s.Tasks() {
					for _, tag := range task.Request.Tags {
						if k, ok := strings.CutPrefix(tag, "sundial_invocation:"); ok && task.Pool() == "witnessed" {
							keys = append(keys, k)
						}
					}
				}
				return keys
			}
		},
		BadSpecs: []targettest.BadSpec{
			{Spec: `{"realm": "acme:ci", "pool": "ci", "command": ["x"]}`, Field: "server"},
			{Spec: `{"server": "http://swarming.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"]}`, Field: "server"},
			{Spec: `{"server": "https://s.example.com", "realm": "ci", "pool": "ci", "command": ["x"]}`, Field: "realm"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "command": ["x"]}`, Field: "pool"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "dimensions": {"pool": "x"}, "command": ["x"]}`, Field: "dimensions"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci"}`, Field: "command"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "relative_cwd": "../up"}`, Field: "relative_cwd"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "cas_input_root": {"cas_instance": "projects/p/instances/i", "digest": "abc"}}`, Field: "cas_input_root.digest"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "cipd_packages": [{"package_name": "infra/x"}]}`, Field: "cipd_packages[0]"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "env": {"A=B": "c"}}`, Field: "env"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "tags": ["sundial_job:x"]}`, Field: "tags"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "priority": 256}`, Field: "priority"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "execution_timeout": "1.5s"}`, Field: "execution_timeout"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "expiration": "ten minutes"}`, Field: "ten minutes"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "grace_period": "-1s"}`, Field: "grace_period"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "service_account": "robot"}`, Field: "service_account"},
			{Spec: `{"server": "https://s.example.com", "realm": "acme:ci", "pool": "ci", "command": ["x"], "comand": ["y"]}`, Field: "comand"},
		},
		LineBreaks: []json.RawMessage{
			json.RawMessage(`{"server": "https://s.example.com", "realm": "acme:ci", "pool": "line\nbreak", "command": ["x"]}`),
		},
		Async: &targettest.Async{
			Finish: func(t *testing.T, req targets.Request, succeeded bool) {
				s := farSideOf(t).swarming
				id := taskOf(t, s, req).ID
				if err := s.Start(id); err != nil {
					t.Fatal(err)
				}
				code := 0
				if !succeeded {
					code = 1
				}
				if err := s.Finish(id, "COMPLETED", code); err != nil {
					t.Fatal(err)
				}
			},
			Pushes: func(t *testing.T) ([]targets.PushRef, int) {
				f := farSideOf(t)
				f.mu.Lock()
				defer f.mu.Unlock()
				return slices.Clone(f.valid), f.invalid
			},
		},
	})
}
