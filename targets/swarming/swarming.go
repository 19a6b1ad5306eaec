// Package swarming is the target that runs a Swarming task on a Swarming
// server, through the Swarming v2 pRPC API (swarming.v2.Tasks: NewTask,
// ListTasks, CancelTask) in its JSON encoding. It is asynchronous: a launch
// returns Running once Swarming has accepted the Swarming task, and the end
// comes later, by a push when Options.PubSubTopic is set (Swarming posts to
// the topic, whose push subscription calls Sundial's push endpoint) and by
// polls always, so a lost push is caught.
//
// Every Swarming task carries a request_uuid derived from the invocation's
// idempotency key and the attempt, so a launch made again after a crash is
// de-duplicated by Swarming itself, and tags by which the target finds it
// again (targets.Resolver):
//
//	sundial_job:<project>/<job>
//	sundial_invocation:<project>/<job>/<invocation id>
//	sundial_attempt:<n>
//	sundial_request:<request_uuid>
//	sundial_scheduled:<the occurrence, RFC 3339 in UTC>
//
// A project's jobs run only in the realms its operator granted it
// (Options.Grants, --swarming-realms): the server's credentials may reach
// other teams' realms.
package swarming

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2/google"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/targets"
)

// Options configure the target.
type Options struct {
	// Client makes the calls to Swarming. Nil: one with OAuth2 tokens from
	// Google default credentials, made at the first call.
	Client *http.Client
	// Grants are the realms each project's jobs may run Swarming tasks
	// in. None means none.
	Grants []RealmGrant
	// Servers are the Swarming servers jobs may name ("https://host", or
	// "https://host:port" for that port only), the only ones the target
	// calls: it sends them the service's credentials, which a server a
	// config chose could use as Sundial's. None means none; a loopback
	// http one only if listed.
	Servers []string
	// AnyRealm lets every project's jobs use any realm and any server: for
	// checking configs (sundial validate), never for a server.
	AnyRealm bool
	// PubSubTopic is the topic Swarming posts the Swarming tasks' updates
	// to, "projects/<project>/topics/<topic>", whose push subscription calls
	// Sundial's push endpoint. "": ends are found by polls alone.
	PubSubTopic string
	// PushToken is the token a push about the attempt must carry
	// (targets.PushToken under the server's secret). Required with
	// PubSubTopic.
	PushToken func(targets.PushRef) string
}

// Target is the swarming target. It is safe for concurrent use.
type Target struct {
	opts Options

	mu sync.Mutex
	c  *http.Client
}

// New returns the target.
func New(opts Options) (*Target, error) {
	if opts.PubSubTopic != "" && opts.PushToken == nil {
		return nil, errors.New("swarming: a Pub/Sub topic needs push tokens")
	}
	opts.Grants = slices.Clone(opts.Grants)
	for _, s := range opts.Servers {
		if err := checkServer(s); err != nil {
			return nil, err
		}
	}
	opts.Servers = slices.Clone(opts.Servers)
	return &Target{opts: opts, c: opts.Client}, nil
}

// Check implements targets.Checker.
func (t *Target) Check(spec json.RawMessage) error {
	_, err := parseSpec(spec)
	return err
}

// CheckFor implements targets.ProjectChecker: a project's jobs run only in
// the realms it was granted.
func (t *Target) CheckFor(project string, spec json.RawMessage) (string, error) {
	s, err := parseSpec(spec)
	if err != nil {
		return "", err
	}
	if err := t.mayCall(s.Server); err != nil {
		return "server", err
	}
	if err := t.mayUse(project, s.Realm); err != nil {
		return "realm", err
	}
	return "", nil
}

// mayCall returns nil if the operator listed server (Options.Servers).
func (t *Target) mayCall(server string) error {
	if t.opts.AnyRealm || slices.ContainsFunc(t.opts.Servers, func(listed string) bool { return sameServer(listed, server) }) {
		return nil
	}
	return fmt.Errorf("the Swarming server %s is not one the operator lists in --swarming-servers", server)
}

// sameServer reports whether server is the listed one: the same scheme and
// host, and the same port if the listed one names one.
func sameServer(listed, server string) bool {
	l, err1 := url.Parse(listed)
	s, err2 := url.Parse(server)
	return err1 == nil && err2 == nil && l.Scheme == s.Scheme &&
		strings.EqualFold(l.Hostname(), s.Hostname()) && (l.Port() == "" || l.Port() == s.Port())
}

func (t *Target) mayUse(project, realm string) error {
	if t.opts.AnyRealm {
		return nil
	}
	for _, g := range t.opts.Grants {
		if g.allows(project, realm) {
			return nil
		}
	}
	return fmt.Errorf("project %s may not run Swarming tasks in realm %s: the server's --swarming-realms does not grant it", project, realm)
}

// client returns the client for server. A loopback http server (checkServer
// allows no other http one) gets no credentials: a token must not travel
// in the clear, and a stand-in or a local proxy needs none.
func (t *Target) client(ctx context.Context, server string) (*http.Client, error) {
	// Every call comes through here: a server not listed gets no call,
	// and no credentials.
	if err := t.mayCall(server); err != nil {
		return nil, err
	}
	if strings.HasPrefix(server, "http://") && t.opts.Client == nil {
		return http.DefaultClient, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c != nil {
		return t.c, nil
	}
	// The client outlives this call: its token source must not stop
	// refreshing when the call's context ends.
	c, err := google.DefaultClient(context.WithoutCancel(ctx), "https://www.googleapis.com/auth/userinfo.email")
	if err != nil {
		return nil, fmt.Errorf("no Google default credentials: %w", err)
	}
	t.c = c
	return c, nil
}

// RequestUUID is the request_uuid of an attempt: the same for every launch
// of the attempt, another for every other attempt, in UUID form.
func RequestUUID(req targets.Request) string {
	h := sha256.Sum256([]byte("sundial\x00" + req.Key + "\x00" + strconv.Itoa(req.Attempt)))
	h[6] = h[6]&0x0f | 0x50 // version 5: name-based
	h[8] = h[8]&0x3f | 0x80 // the RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// launchTries is how many times a NewTask that got no answer is sent:
// the same request_uuid makes a repeat safe.
const launchTries = 3

// Launch implements targets.Target: it asks Swarming for the Swarming task
// and returns Running once Swarming has accepted it (or the end, if Swarming
// answered with a finished Swarming task it de-duplicated to).
func (t *Target) Launch(ctx context.Context, req targets.Request) targets.Result {
	spec, err := parseSpec(req.Spec)
	if err != nil {
		return failed(err.Error())
	}
	project := jobid.Split(req.JobID).Project
	if err := t.mayUse(project, spec.Realm); err != nil {
		return failed("swarming: " + err.Error())
	}
	c, err := t.client(ctx, spec.Server)
	if err != nil {
		return failed("swarming: " + err.Error())
	}
	in := t.newTaskRequest(spec, req)
	var out newTaskResponse
	for try := 1; ; try++ {
		err = call(ctx, c, spec.Server, "NewTask", in, &out)
		if err == nil || permanent(err) || try == launchTries || ctx.Err() != nil {
			break
		}
	}
	switch {
	case ctx.Err() != nil:
		return failed(fmt.Sprintf("swarming: asking %s for the Swarming task: %v", spec.Server, context.Cause(ctx)))
	case err != nil:
		return failed(fmt.Sprintf("swarming: asking %s for the Swarming task: %s", spec.Server, oneLine(err.Error())))
	case out.TaskID == "":
		return failed(fmt.Sprintf("swarming: %s answered NewTask without a Swarming task id", spec.Server))
	}
	if out.Result != nil && final(out.Result.State) {
		return resultOf(spec.Server, *out.Result)
	}
	return targets.Result{Status: targets.Running, Message: fmt.Sprintf("Swarming task %s on %s", out.TaskID, spec.Server)}
}

func (t *Target) newTaskRequest(spec Spec, req targets.Request) taskRequest {
	uuid := RequestUUID(req)
	tags := append(slices.Clone(spec.Tags),
		"sundial_job:"+req.JobID,
		"sundial_invocation:"+req.Key,
		"sundial_attempt:"+strconv.Itoa(req.Attempt),
		"sundial_request:"+uuid,
		"sundial_scheduled:"+req.Occurrence.UTC().Format(time.RFC3339),
	)
	slices.Sort(tags)
	in := taskRequest{
		Name:     fmt.Sprintf("sundial %s %s#%d", req.JobID, req.Invocation, req.Attempt),
		Priority: spec.Priority,
		TaskSlices: []taskSlice{{
			Properties:     spec.properties(),
			ExpirationSecs: int(orDefault(spec.Expiration, defaultExpiration) / time.Second),
		}},
		Tags:           tags,
		ServiceAccount: spec.ServiceAccount,
		RequestUUID:    uuid,
		Realm:          spec.Realm,
	}
	if in.Priority == 0 {
		in.Priority = defaultPriority
	}
	if t.opts.PubSubTopic != "" {
		ref := targets.RefOf(req)
		in.PubSubTopic, in.PubSubAuthToken, in.PubSubUserdata = t.opts.PubSubTopic, t.opts.PushToken(ref), ref.Encode()
	}
	return in
}

// find returns the Swarming task of an attempt, found by its
// sundial_request tag, or nil if Swarming has none.
func (t *Target) find(ctx context.Context, req targets.Request) (*Spec, *taskResult, error) {
	spec, err := parseSpec(req.Spec)
	if err != nil {
		return nil, nil, err
	}
	c, err := t.client(ctx, spec.Server)
	if err != nil {
		return nil, nil, err
	}
	var out taskListResponse
	err = call(ctx, c, spec.Server, "ListTasks", taskListRequest{
		Limit: 2,
		// The Swarming task was made after its occurrence; a day's margin
		// covers any skew between Swarming's clock and ours.
		Start: req.Occurrence.Add(-24 * time.Hour).UTC().Format(time.RFC3339),
		State: "QUERY_ALL",
		Tags:  []string{"sundial_request:" + RequestUUID(req)},
	}, &out)
	if err != nil {
		return nil, nil, fmt.Errorf("swarming: listing the Swarming tasks of %s#%d on %s: %w", req.Key, req.Attempt, spec.Server, err)
	}
	switch len(out.Items) {
	case 0:
		return &spec, nil, nil
	case 1:
		return &spec, &out.Items[0], nil
	}
	// request_uuid de-duplicates for days, not for ever: two Swarming tasks
	// for one attempt cannot be told apart.
	return nil, nil, fmt.Errorf("swarming: %s has %d Swarming tasks for %s#%d: %w", spec.Server, len(out.Items), req.Key, req.Attempt, targets.ErrUnknown)
}

// Resolve implements targets.Resolver: Swarming is asked for the attempt's
// Swarming task by its tags; how it is doing is the answer (Running while
// PENDING or RUNNING).
func (t *Target) Resolve(ctx context.Context, req targets.Request) (bool, targets.Result, error) {
	spec, task, err := t.find(ctx, req)
	if err != nil || task == nil {
		return false, targets.Result{}, err
	}
	return true, resultOf(spec.Server, *task), nil
}

// Abort implements targets.Aborter: the attempt's Swarming task is
// canceled, and killed if it runs.
func (t *Target) Abort(ctx context.Context, req targets.Request) error {
	spec, task, err := t.find(ctx, req)
	if err != nil || task == nil || final(task.State) {
		return err
	}
	c, err := t.client(ctx, spec.Server)
	if err != nil {
		return err
	}
	var out cancelResponse
	if err := call(ctx, c, spec.Server, "CancelTask", cancelRequest{TaskID: task.TaskID, KillRunning: true}, &out); err != nil {
		return fmt.Errorf("swarming: canceling Swarming task %s on %s: %w", task.TaskID, spec.Server, err)
	}
	if !out.Canceled {
		return fmt.Errorf("swarming: %s did not cancel Swarming task %s (it may have ended)", spec.Server, task.TaskID)
	}
	return nil
}

// final reports whether a Swarming task state will not change again.
func final(state string) bool { return state != "PENDING" && state != "RUNNING" }

// resultOf is how a Swarming task is doing, as an attempt's result: its
// state is in the message, and only COMPLETED with exit code 0 succeeds.
func resultOf(server string, r taskResult) targets.Result {
	where := fmt.Sprintf("Swarming task %s on %s", r.TaskID, server)
	switch r.State {
	case "PENDING", "RUNNING":
		return targets.Result{Status: targets.Running, Message: where + " is " + r.State}
	case "COMPLETED":
		code := r.ExitCode
		if code == "" {
			code = "0" // proto3 JSON leaves zeros out
		}
		if code == "0" && !r.Failure {
			return targets.Result{Status: targets.Succeeded, Message: where + ": COMPLETED, exit code 0"}
		}
		return failed(where + ": COMPLETED, exit code " + code)
	case "TIMED_OUT", "BOT_DIED", "EXPIRED", "CANCELED", "KILLED", "NO_RESOURCE", "CLIENT_ERROR":
		return failed(where + ": " + r.State)
	}
	return failed(fmt.Sprintf("%s: unknown state %q", where, r.State))
}

func failed(msg string) targets.Result {
	return targets.Result{Status: targets.Failed, Message: msg}
}

// oneLine keeps a server's words to the one line a Result.Message is.
func oneLine(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}
