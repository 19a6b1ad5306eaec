package cloudtasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/task"
)

// payloadVersion is the version of the payload's format. Tasks created by
// one release are delivered to the next (they wait in the queue through an
// upgrade), so its field names are never renamed or reused, and a change
// the previous release could not read gets a new version while Decode
// keeps reading the old ones; testdata/payload pins each version. Version
// 0, the payloads of releases up to 313afd2, is version 1 without "v".
const payloadVersion = 1

// payload is a task as it travels in a Cloud Tasks request body.
type payload struct {
	Version    *int      `json:"v,omitempty"`
	Kind       task.Kind `json:"kind"`
	Job        string    `json:"job"`
	Nonce      int64     `json:"nonce"`
	ETA        time.Time `json:"eta"`
	Invocation string    `json:"invocation,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
}

// Encode is the body of the Cloud Tasks task that carries t.
func Encode(t task.Task) ([]byte, error) {
	v := payloadVersion
	return json.Marshal(payload{
		Version: &v, Kind: t.Kind, Job: t.JobID, Nonce: t.Nonce, ETA: t.ETA.UTC(),
		Invocation: t.Invocation, Attempt: t.Attempt,
	})
}

// Decode reads a task from a body made by Encode. It refuses anything else
// with an error naming what is wrong.
func Decode(body []byte) (task.Task, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var p payload
	if err := dec.Decode(&p); err != nil {
		return task.Task{}, fmt.Errorf("task body: %w", err)
	}
	if dec.More() {
		return task.Task{}, errors.New("task body: more than one JSON value")
	}
	t := task.Task{Kind: p.Kind, JobID: p.Job, Nonce: p.Nonce, ETA: p.ETA, Invocation: p.Invocation, Attempt: p.Attempt}
	switch {
	case p.Version != nil && *p.Version != payloadVersion:
		return t, fmt.Errorf("task body: version %d: this release reads versions 0 and %d", *p.Version, payloadVersion)
	case p.Kind != task.TickLater && p.Kind != task.StartInvocation && p.Kind != task.PollInvocation && p.Kind != task.NotifyLongRun:
		return t, fmt.Errorf("task body: kind %q: want %q, %q, %q or %q", p.Kind, task.TickLater, task.StartInvocation, task.PollInvocation, task.NotifyLongRun)
	case p.Job == "":
		return t, errors.New("task body: job: missing")
	case p.Nonce == 0:
		return t, errors.New("task body: nonce: missing")
	case (p.Kind == task.StartInvocation || p.Kind == task.PollInvocation || p.Kind == task.NotifyLongRun) && p.Invocation == "":
		return t, fmt.Errorf("task body: invocation: missing in a %s task", p.Kind)
	}
	return t, nil
}
