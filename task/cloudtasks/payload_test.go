package cloudtasks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/cloudtasks"
)

var t0 = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

func TestPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, want := range []task.Task{
		{Kind: task.TickLater, JobID: "proj/job", Nonce: 42, ETA: t0},
		{Kind: task.StartInvocation, JobID: "proj/job", Nonce: -7, ETA: t0.Add(time.Second), Invocation: "inv-1", Attempt: 3},
		{Kind: task.PollInvocation, JobID: "proj/job", Nonce: 9, ETA: t0.Add(time.Minute), Invocation: "inv-1", Attempt: 3},
	} {
		body, err := cloudtasks.Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cloudtasks.Decode(body)
		if err != nil {
			t.Fatalf("Decode(%s): %v", body, err)
		}
		if !got.ETA.Equal(want.ETA) {
			t.Errorf("ETA = %v, want %v", got.ETA, want.ETA)
		}
		got.ETA = want.ETA
		if got != want {
			t.Errorf("Decode(Encode(%v)) = %v", want, got)
		}
	}
}

func TestDecodeRefusesMalformedBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, wantErr string
	}{
		{"not JSON", `tick please`, "invalid character"},
		{"an empty body", ``, "EOF"},
		{"an unknown field", `{"kind":"tick","job":"p/j","nonce":1,"priority":9}`, `unknown field "priority"`},
		{"an unknown kind", `{"kind":"explode","job":"p/j","nonce":1}`, `kind "explode"`},
		{"no job", `{"kind":"tick","nonce":1}`, "job: missing"},
		{"no nonce", `{"kind":"tick","job":"p/j"}`, "nonce: missing"},
		{"a start without its invocation", `{"kind":"start","job":"p/j","nonce":1}`, "invocation: missing"},
		{"a poll without its invocation", `{"kind":"poll","job":"p/j","nonce":1}`, "invocation: missing in a poll task"},
		{"two tasks in one body", `{"kind":"tick","job":"p/j","nonce":1}{"kind":"tick","job":"p/j","nonce":2}`, "more than one"},
		{"a nonce that is not a number", `{"kind":"tick","job":"p/j","nonce":"1"}`, "nonce"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cloudtasks.Decode([]byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Decode(%s) = %v, want an error containing %q", tt.body, err, tt.wantErr)
			}
		})
	}
}

// goldenTasks are the tasks testdata/payload's files carry: v0-* as
// release 313afd2 encoded them (still queued during an upgrade), v1-* as
// this release does.
var goldenTasks = map[string]task.Task{
	"tick.json":  {Kind: task.TickLater, JobID: "proj/job", Nonce: 1234567890123, ETA: time.Date(2026, 3, 2, 10, 5, 1, 500e6, time.UTC)},
	"start.json": {Kind: task.StartInvocation, JobID: "proj/job", Nonce: -42, ETA: time.Date(2026, 3, 2, 10, 5, 0, 0, time.UTC), Invocation: "20260302T100500Z", Attempt: 2},
}

// TestPayloadGoldens: every version's payloads decode to their tasks, and
// the current version encodes to its goldens byte for byte.
func TestPayloadGoldens(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "payload", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*len(goldenTasks) {
		t.Errorf("%d golden payloads, want v0 and v1 of each of %d tasks", len(files), len(goldenTasks))
	}
	for _, f := range files {
		version, name, _ := strings.Cut(filepath.Base(f), "-")
		want, ok := goldenTasks[name]
		if !ok {
			t.Errorf("%s: no task listed for it", f)
			continue
		}
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cloudtasks.Decode(body)
		if err != nil {
			t.Errorf("%s: %v: a task queued by that release would be dropped", f, err)
			continue
		}
		if !got.ETA.Equal(want.ETA) {
			t.Errorf("%s: ETA %v, want %v", f, got.ETA, want.ETA)
		}
		got.ETA = want.ETA
		if got != want {
			t.Errorf("%s decodes to %+v, want %+v", f, got, want)
		}
		if version != "v1" {
			continue
		}
		enc, err := cloudtasks.Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		if string(enc) != string(body) {
			t.Errorf("the payload format changed:\n got %s\nwant %s\nTasks in the queue hold the old one: "+
				"bump the version, keep decoding the old one, add goldens for the new one.", enc, body)
		}
	}
}

func TestDecodeRefusesALaterVersion(t *testing.T) {
	t.Parallel()
	_, err := cloudtasks.Decode([]byte(`{"v":2,"kind":"tick","job":"p/j","nonce":1}`))
	if err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a payload of version 2: err %v, want one naming the version", err)
	}
}
