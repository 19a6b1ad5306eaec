package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/swarming"
	"github.com/sundial-cron/sundial/targets/swarming/swarmingtest"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
	"github.com/sundial-cron/sundial/web"
)

var pushSecret = []byte("the push secret of the web tests, 32+ bytes")

// pushSetup is a swarming job RUNNING on a stand-in Swarming whose Swarming
// task has COMPLETED, with pushes lost, and the push endpoint over the
// engine.
type pushSetup struct {
	st       *sqlite.Store
	endpoint http.Handler
	ref      targets.PushRef
	taskID   string
}

func newPushSetup(t *testing.T) *pushSetup {
	t.Helper()
	ctx := context.Background()
	clk := fakeclock.New(t0)
	sw := swarmingtest.New()
	t.Cleanup(sw.Close)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tgt, err := swarming.New(swarming.Options{
		Client: http.DefaultClient, Servers: []string{"http://127.0.0.1"}, Grants: []swarming.RealmGrant{{Project: "p", Realm: "acme", Any: true}},
		PubSubTopic: "projects/acme/topics/swarming",
		PushToken:   func(ref targets.PushRef) string { return targets.PushToken(pushSecret, ref) },
	})
	if err != nil {
		t.Fatal(err)
	}
	q := &enginetest.LateQueue{}
	eng := engine.New(st, q, map[string]targets.Target{"swarming": tgt}, engine.Options{Now: clk.Now})
	disp := local.New(st, eng.HandleTask, local.Options{Owner: "proc-1", Workers: 2, OrphanAfter: 10 * time.Second, Now: clk.Now, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = disp
	spec := json.RawMessage(fmt.Sprintf(`{"server": %q, "realm": "acme:ci", "pool": "ci", "command": ["run"]}`, sw.URL))
	if err := eng.Define(ctx, "p/job", engine.Definition{Schedule: "1 * * * *", Target: "swarming", Spec: spec, Policy: statemachine.Policy{Timeout: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	if err := enginetest.RunUntil(ctx, clk, st, disp, watchdog.New(st, eng, watchdog.Options{Now: clk.Now}), t0.Add(time.Minute+time.Second)); err != nil {
		t.Fatal(err)
	}
	tasks := sw.Tasks()
	if len(tasks) != 1 {
		t.Fatalf("%d Swarming tasks on the stand-in; want 1", len(tasks))
	}
	if err := sw.Finish(tasks[0].ID, "COMPLETED", 0); err != nil {
		t.Fatal(err)
	}
	return &pushSetup{
		st:       st,
		endpoint: &web.PushEndpoint{Secret: pushSecret, Check: eng.Check, Logger: slog.New(slog.DiscardHandler)},
		ref:      targets.PushRef{JobID: "p/job", Invocation: statemachine.OccurrenceID(t0.Add(time.Minute)), Attempt: 1},
		taskID:   tasks[0].ID,
	}
}

func (p *pushSetup) status(t *testing.T) string {
	t.Helper()
	inv, err := p.st.Invocation(context.Background(), p.ref.JobID, p.ref.Invocation)
	if err != nil {
		t.Fatal(err)
	}
	return inv.Status
}

// pushBody is a Pub/Sub push of Swarming's message about ref.
func pushBody(taskID string, ref targets.PushRef, token string) string {
	data, _ := json.Marshal(map[string]string{"task_id": taskID, "userdata": ref.Encode()})
	b, _ := json.Marshal(map[string]any{"message": map[string]any{
		"data": base64.StdEncoding.EncodeToString(data), "attributes": map[string]string{"auth_token": token}, "messageId": "1",
	}, "subscription": "projects/acme/subscriptions/sundial"})
	return string(b)
}

func (p *pushSetup) post(method, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	p.endpoint.ServeHTTP(w, httptest.NewRequest(method, "/internal/push", bytes.NewBufferString(body)))
	return w
}

func TestPush_AValidPushRecordsTheEndOnce(t *testing.T) {
	t.Parallel()
	p := newPushSetup(t)
	body := pushBody(p.taskID, p.ref, targets.PushToken(pushSecret, p.ref))
	for i := range 3 {
		if w := p.post(http.MethodPost, body); w.Code != http.StatusNoContent {
			t.Fatalf("push %d = %d %s; want 204", i+1, w.Code, w.Body)
		}
		if st := p.status(t); st != string(statemachine.StatusSucceeded) {
			t.Fatalf("after push %d the invocation is %s; want SUCCEEDED", i+1, st)
		}
	}
	inv, _ := p.st.Invocation(context.Background(), p.ref.JobID, p.ref.Invocation)
	if n := bytes.Count(inv.Log, []byte(" SUCCEEDED")); n != 1 {
		t.Errorf("the log records SUCCEEDED %d times; want once:\n%s", n, inv.Log)
	}
}

func TestPush_BadPushesAreRefusedAndChangeNothing(t *testing.T) {
	t.Parallel()
	p := newPushSetup(t)
	other := p.ref
	other.Attempt = 2
	for _, tc := range []struct {
		name, method, body string
		want               int
	}{
		{"not a POST", http.MethodGet, "", http.StatusMethodNotAllowed},
		{"not JSON", http.MethodPost, "task done", http.StatusBadRequest},
		{"data not base64", http.MethodPost, `{"message": {"data": "%%%", "attributes": {"auth_token": "x"}}}`, http.StatusBadRequest},
		{"no userdata", http.MethodPost, `{"message": {"data": "` + base64.StdEncoding.EncodeToString([]byte(`{"task_id": "1"}`)) + `", "attributes": {"auth_token": "x"}}}`, http.StatusBadRequest},
		{"no token", http.MethodPost, pushBody(p.taskID, p.ref, ""), http.StatusBadRequest},
		{"a forged token", http.MethodPost, pushBody(p.taskID, p.ref, "forged"), http.StatusForbidden},
		{"another attempt's token", http.MethodPost, pushBody(p.taskID, p.ref, targets.PushToken(pushSecret, other)), http.StatusForbidden},
		{"a token under another secret", http.MethodPost, pushBody(p.taskID, p.ref, targets.PushToken([]byte("another secret"), p.ref)), http.StatusForbidden},
	} {
		if w := p.post(tc.method, tc.body); w.Code != tc.want {
			t.Errorf("%s: %d %s; want %d", tc.name, w.Code, w.Body, tc.want)
		}
		if st := p.status(t); st != string(statemachine.StatusRunning) {
			t.Fatalf("%s: the invocation is %s; want it RUNNING still", tc.name, st)
		}
	}
}

func TestPush_APushAboutAnUnknownAttemptIsAcknowledged(t *testing.T) {
	t.Parallel()
	p := newPushSetup(t)
	gone := targets.PushRef{JobID: "p/job", Invocation: "20990101T000000Z", Attempt: 1}
	if w := p.post(http.MethodPost, pushBody("x", gone, targets.PushToken(pushSecret, gone))); w.Code != http.StatusNoContent {
		t.Errorf("push about an invocation not stored = %d %s; want 204, so Pub/Sub stops sending it", w.Code, w.Body)
	}
}
