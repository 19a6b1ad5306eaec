package cloudtasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/task"
)

// payload is a task as it travels in a Cloud Tasks request body. Its field
// names are the wire format: tasks created by one release are delivered to
// the next.
type payload struct {
	Kind       task.Kind `json:"kind"`
	Job        string    `json:"job"`
	Nonce      int64     `json:"nonce"`
	ETA        time.Time `json:"eta"`
	Invocation string    `json:"invocation,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
}

// Encode is the body of the Cloud Tasks task that carries t.
func Encode(t task.Task) ([]byte, error) {
	return json.Marshal(payload{
		Kind: t.Kind, Job: t.JobID, Nonce: t.Nonce, ETA: t.ETA.UTC(),
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
	case p.Kind != task.TickLater && p.Kind != task.StartInvocation:
		return t, fmt.Errorf("task body: kind %q: want %q or %q", p.Kind, task.TickLater, task.StartInvocation)
	case p.Job == "":
		return t, errors.New("task body: job: missing")
	case p.Nonce == 0:
		return t, errors.New("task body: nonce: missing")
	case p.Kind == task.StartInvocation && p.Invocation == "":
		return t, errors.New("task body: invocation: missing in a start task")
	}
	return t, nil
}
