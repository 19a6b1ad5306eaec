package cloudtasks_test

import (
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
