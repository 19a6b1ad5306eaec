// Package swarmingtest is a stand-in Swarming server for tests: it serves
// the calls of the Swarming v2 pRPC API that targets/swarming makes
// (swarming.v2.Tasks NewTask, GetResult, ListTasks, CancelTask) in their
// JSON encoding, over a loopback HTTP server. It never ships in the binary.
//
// What it models, as the real server does:
//   - a Swarming task request needs a pool dimension, a command and a realm;
//   - a request_uuid seen before answers with the Swarming task it made
//     (the real server remembers one for days; this one for its life);
//   - a Swarming task moves PENDING -> RUNNING -> a final state, moved by
//     the test (Start, Finish);
//   - CancelTask cancels a PENDING Swarming task, and a RUNNING one only with
//     kill_running (it becomes KILLED at once);
//   - when a Swarming task with a pubsub_topic reaches its final state, it is
//     pushed to PushTo's URL as a Pub/Sub push subscription delivers
//     Swarming's message ({"task_id", "userdata"} with the auth_token
//     attribute), unless the test drops pushes; or it can be polled.
//
// What it does not model: bots and dimension matching (a Swarming task is
// NO_RESOURCE only in a pool the test says has no bots, and never
// EXPIRED unless a test finishes it so), task slices after
// the first, timeouts of any kind, authentication and realm permissions,
// de-duplication of idempotent properties, BOT_DIED retries, the binary
// pRPC encoding, ListTasks' paging and eventual consistency, and Pub/Sub's
// own retries of a push.
package swarmingtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
)

// Task is what the stand-in holds of one Swarming task.
type Task struct {
	ID       string
	Request  NewTaskRequest
	State    string
	ExitCode int
	Pushes   int // pushes delivered
}

// Pool is the Swarming task's pool dimension.
func (t Task) Pool() string {
	for _, d := range t.Request.TaskSlices[0].Properties.Dimensions {
		if d.Key == "pool" {
			return d.Value
		}
	}
	return ""
}

// NewTaskRequest is the part of swarming.v2.NewTaskRequest the stand-in
// reads.
type NewTaskRequest struct {
	Name       string   `json:"name"`
	Priority   int      `json:"priority"`
	Tags       []string `json:"tags"`
	Realm      string   `json:"realm"`
	TaskSlices []struct {
		Properties struct {
			Command    []string `json:"command"`
			Dimensions []struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			} `json:"dimensions"`
			Env []struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			} `json:"env"`
			ExecutionTimeoutSecs int    `json:"executionTimeoutSecs"`
			RelativeCwd          string `json:"relativeCwd"`
		} `json:"properties"`
		ExpirationSecs int `json:"expirationSecs"`
	} `json:"taskSlices"`
	ServiceAccount  string `json:"serviceAccount"`
	PubSubTopic     string `json:"pubsubTopic"`
	PubSubAuthToken string `json:"pubsubAuthToken"`
	PubSubUserdata  string `json:"pubsubUserdata"`
	RequestUUID     string `json:"requestUuid"`
}

// Server is the stand-in. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server

	mu      sync.Mutex
	tasks   []*Task
	byUUID  map[string]*Task
	calls   map[string]int
	pushURL string
	drop    bool
	fail    map[string]int // method -> answers to fail with UNAVAILABLE
	noBots  map[string]bool
	held    map[string]chan struct{} // by pool: NewTask waits, the channel closed when one arrives
	mute    map[string]chan struct{} // by pool: NewTask makes the task, then waits
}

// New starts a stand-in; Close stops it.
func New() *Server {
	s := &Server{byUUID: map[string]*Task{}, calls: map[string]int{}, fail: map[string]int{}, noBots: map[string]bool{}, held: map[string]chan struct{}{}, mute: map[string]chan struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /prpc/swarming.v2.Tasks/NewTask", s.rpc(s.newTask))
	mux.HandleFunc("POST /prpc/swarming.v2.Tasks/GetResult", s.rpc(s.getResult))
	mux.HandleFunc("POST /prpc/swarming.v2.Tasks/ListTasks", s.rpc(s.listTasks))
	mux.HandleFunc("POST /prpc/swarming.v2.Tasks/CancelTask", s.rpc(s.cancelTask))
	s.Server = httptest.NewServer(mux)
	return s
}

// PushTo makes the stand-in push each change of a Swarming task's state to
// url, for the Swarming tasks that name a pubsub_topic.
func (s *Server) PushTo(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushURL = url
}

// DropPushes loses every push from now on (drop true), as a Pub/Sub
// subscription that was deleted or a push endpoint that was down would.
func (s *Server) DropPushes(drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop = drop
}

// FailNext makes the next n calls of method answer UNAVAILABLE without
// doing anything.
func (s *Server) FailNext(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] = n
}

// NoBots says pool has no bots: a Swarming task for it is NO_RESOURCE at
// once, as Swarming answers when no bot could run it (wait_for_capacity
// unset).
func (s *Server) NoBots(pool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noBots[pool] = true
}

// Hold makes every NewTask for pool wait until its caller goes away,
// creating nothing, as a server that never answers; the channel is closed
// when the first one arrives.
func (s *Server) Hold(pool string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(chan struct{})
	s.held[pool] = c
	return c
}

// HoldAnswer makes the next NewTask for pool make its Swarming task and
// then wait, unanswered, until its caller goes away: a launch whose answer
// is lost.
// The channel is closed when the Swarming task has been made.
func (s *Server) HoldAnswer(pool string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(chan struct{})
	s.mute[pool] = c
	return c
}

// Calls is how many calls of method the stand-in answered.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Tasks returns a copy of every Swarming task, oldest first.
func (s *Server) Tasks() []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Task, len(s.tasks))
	for i, t := range s.tasks {
		out[i] = *t
	}
	return out
}

// Forget drops a Swarming task, as a listing that lags behind the launch
// (or a server that lost it) would not show it.
func (s *Server) Forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks = slices.DeleteFunc(s.tasks, func(t *Task) bool { return t.ID == id })
}

// Start moves a PENDING Swarming task to RUNNING, as a bot reaping it would.
func (s *Server) Start(id string) error {
	return s.move(id, "RUNNING", 0, "PENDING")
}

// Finish moves a PENDING or RUNNING Swarming task to a final state;
// exitCode counts for COMPLETED.
func (s *Server) Finish(id, state string, exitCode int) error {
	switch state {
	case "COMPLETED", "TIMED_OUT", "BOT_DIED", "EXPIRED", "CANCELED", "KILLED", "NO_RESOURCE", "CLIENT_ERROR":
	default:
		return fmt.Errorf("swarmingtest: %q is not a final state", state)
	}
	return s.move(id, state, exitCode, "PENDING", "RUNNING")
}

func (s *Server) move(id, state string, exitCode int, from ...string) error {
	s.mu.Lock()
	t := s.task(id)
	if t == nil {
		s.mu.Unlock()
		return fmt.Errorf("swarmingtest: no task %s", id)
	}
	if !slices.Contains(from, t.State) {
		s.mu.Unlock()
		return fmt.Errorf("swarmingtest: task %s is %s, not %v", id, t.State, from)
	}
	t.State, t.ExitCode = state, exitCode
	push := s.pushLocked(t)
	s.mu.Unlock()
	return push()
}

// pushLocked returns the push of t's end, to make once s.mu is released:
// the push's receiver may call the stand-in back.
func (s *Server) pushLocked(t *Task) func() error {
	if t.Request.PubSubTopic == "" || s.pushURL == "" || s.drop || t.State == "PENDING" || t.State == "RUNNING" {
		return func() error { return nil }
	}
	data, _ := json.Marshal(map[string]string{"task_id": t.ID, "userdata": t.Request.PubSubUserdata})
	body, _ := json.Marshal(map[string]any{
		"message": map[string]any{
			"data":       base64.StdEncoding.EncodeToString(data),
			"attributes": map[string]string{"auth_token": t.Request.PubSubAuthToken},
			"messageId":  t.ID + "-" + t.State,
		},
		"subscription": "projects/stand-in/subscriptions/swarming",
	})
	url, task := s.pushURL, t
	return func() error {
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("swarmingtest: pushing task %s: %w", task.ID, err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("swarmingtest: pushing task %s: HTTP %d", task.ID, resp.StatusCode)
		}
		s.mu.Lock()
		task.Pushes++
		s.mu.Unlock()
		return nil
	}
}

func (s *Server) task(id string) *Task {
	for _, t := range s.tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// rpcErr is a pRPC error answer.
type rpcErr struct {
	code   int
	status int
	msg    string
}

func invalid(format string, args ...any) *rpcErr {
	return &rpcErr{code: 3, status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// rpc serves one method: it checks pRPC's JSON headers, decodes the
// request, and writes the answer with pRPC's prefix or the error with its
// gRPC code.
func (s *Server) rpc(fn func(r *http.Request, body []byte) (any, *rpcErr)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		method := r.URL.Path[len("/prpc/swarming.v2.Tasks/"):]
		var e *rpcErr
		var out any
		body, err := io.ReadAll(r.Body)
		s.mu.Lock()
		s.calls[method]++
		failing := s.fail[method] > 0
		if failing {
			s.fail[method]--
		}
		s.mu.Unlock()
		switch {
		case err != nil:
			e = invalid("reading the body: %v", err)
		case r.Header.Get("Content-Type") != "application/json":
			e = invalid("Content-Type %q: this stand-in speaks pRPC's JSON encoding only", r.Header.Get("Content-Type"))
		case r.Header.Get("Accept") != "application/json":
			e = &rpcErr{code: 3, status: http.StatusNotAcceptable, msg: "Accept: want application/json"}
		case failing:
			e = &rpcErr{code: 14, status: http.StatusServiceUnavailable, msg: "unavailable (injected)"}
		default:
			out, e = fn(r, body)
		}
		if e != nil {
			w.Header().Set("X-Prpc-Grpc-Code", strconv.Itoa(e.code))
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(e.status)
			io.WriteString(w, e.msg+"\n")
			return
		}
		b, _ := json.Marshal(out)
		w.Header().Set("X-Prpc-Grpc-Code", "0")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, ")]}'\n")
		w.Write(b)
		io.WriteString(w, "\n")
	}
}

func decode(body []byte, v any) *rpcErr {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return invalid("decoding the request: %v", err)
	}
	return nil
}

func (s *Server) newTask(r *http.Request, body []byte) (any, *rpcErr) {
	var req NewTaskRequest
	if e := decode(body, &req); e != nil {
		return nil, e
	}
	if len(req.TaskSlices) == 0 {
		return nil, invalid("task_slices: at least one is required")
	}
	p := req.TaskSlices[0].Properties
	pool := ""
	for _, d := range p.Dimensions {
		if d.Key == "pool" {
			pool = d.Value
		}
	}
	switch {
	case pool == "":
		return nil, invalid("pool is required")
	case len(p.Command) == 0:
		return nil, invalid("command is required")
	case req.Realm == "":
		return nil, invalid("realm is required")
	case req.Priority < 1 || req.Priority > 255:
		return nil, invalid("priority %d: want 1 to 255", req.Priority)
	}
	s.mu.Lock()
	if c, ok := s.held[pool]; ok {
		if c != nil {
			close(c)
			s.held[pool] = nil
		}
		s.mu.Unlock()
		<-r.Context().Done()
		return nil, &rpcErr{code: 1, status: 499, msg: "the client went away"}
	}
	if t := s.byUUID[req.RequestUUID]; req.RequestUUID != "" && t != nil {
		s.mu.Unlock()
		return s.metadata(t), nil
	}
	t := &Task{ID: fmt.Sprintf("%x0", 0x6a0000+len(s.tasks)+1), Request: req, State: "PENDING"}
	if s.noBots[pool] {
		t.State = "NO_RESOURCE"
	}
	s.tasks = append(s.tasks, t)
	if req.RequestUUID != "" {
		s.byUUID[req.RequestUUID] = t
	}
	lose, ok := s.mute[pool]
	delete(s.mute, pool)
	s.mu.Unlock()
	if ok {
		close(lose)
		<-r.Context().Done()
		return nil, &rpcErr{code: 1, status: 499, msg: "the client went away"}
	}
	return s.metadata(t), nil
}

func (s *Server) metadata(t *Task) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{"taskId": t.ID, "request": map[string]any{"taskId": t.ID, "name": t.Request.Name, "tags": t.Request.Tags}}
	if t.State != "PENDING" && t.State != "RUNNING" {
		out["taskResult"] = result(t)
	}
	return out
}

// result is a Swarming task's swarming.v2.TaskResultResponse, as pRPC's JSON
// writes it: zeros left out, int64 in a string.
func result(t *Task) map[string]any {
	r := map[string]any{"taskId": t.ID, "state": t.State, "tags": t.Request.Tags, "name": t.Request.Name}
	if t.State == "COMPLETED" && t.ExitCode != 0 {
		r["exitCode"] = strconv.Itoa(t.ExitCode)
		r["failure"] = true
	}
	if t.State == "BOT_DIED" {
		r["internalFailure"] = true
	}
	return r
}

func (s *Server) getResult(_ *http.Request, body []byte) (any, *rpcErr) {
	var req struct {
		TaskID string `json:"taskId"`
	}
	if e := decode(body, &req); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.task(req.TaskID)
	if t == nil {
		return nil, &rpcErr{code: 5, status: http.StatusNotFound, msg: "no such task"}
	}
	return result(t), nil
}

func (s *Server) listTasks(_ *http.Request, body []byte) (any, *rpcErr) {
	var req struct {
		Limit int      `json:"limit"`
		State string   `json:"state"`
		Tags  []string `json:"tags"`
	}
	if e := decode(body, &req); e != nil {
		return nil, e
	}
	if req.State != "" && req.State != "QUERY_ALL" {
		return nil, invalid("state %q: this stand-in lists QUERY_ALL only", req.State)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	items := []map[string]any{}
	for i := len(s.tasks) - 1; i >= 0; i-- { // newest first, as CREATED_TS sorts
		t := s.tasks[i]
		match := true
		for _, tag := range req.Tags {
			match = match && slices.Contains(t.Request.Tags, tag)
		}
		if match && (req.Limit <= 0 || len(items) < req.Limit) {
			items = append(items, result(t))
		}
	}
	return map[string]any{"items": items}, nil
}

func (s *Server) cancelTask(_ *http.Request, body []byte) (any, *rpcErr) {
	var req struct {
		TaskID      string `json:"taskId"`
		KillRunning bool   `json:"killRunning"`
	}
	if e := decode(body, &req); e != nil {
		return nil, e
	}
	s.mu.Lock()
	t := s.task(req.TaskID)
	if t == nil {
		s.mu.Unlock()
		return nil, &rpcErr{code: 5, status: http.StatusNotFound, msg: "no such task"}
	}
	out := map[string]any{}
	push := func() error { return nil }
	switch {
	case t.State == "PENDING":
		t.State = "CANCELED"
		out["canceled"] = true
		push = s.pushLocked(t)
	case t.State == "RUNNING" && req.KillRunning:
		t.State = "KILLED"
		out["canceled"], out["wasRunning"] = true, true
		push = s.pushLocked(t)
	case t.State == "RUNNING":
		out["wasRunning"] = true
	}
	s.mu.Unlock()
	push()
	return out, nil
}
