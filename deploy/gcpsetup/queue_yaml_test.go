package gcpsetup_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sundial-cron/sundial/deploy/gcpsetup"
)

// App Engine's queue.yaml and the Cloud Run queue gcpsetup makes must run
// Sundial's tasks alike.
func TestQueueYAMLAgrees(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Queue []struct {
			Name                  string `yaml:"name"`
			Rate                  string `yaml:"rate"`
			MaxConcurrentRequests int32  `yaml:"max_concurrent_requests"`
			Retry                 struct {
				MinBackoffSeconds float64 `yaml:"min_backoff_seconds"`
				MaxDoublings      int32   `yaml:"max_doublings"`
				MaxBackoffSeconds float64 `yaml:"max_backoff_seconds"`
				TaskAgeLimit      string  `yaml:"task_age_limit"`
			} `yaml:"retry_parameters"`
		} `yaml:"queue"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Queue) != 1 {
		t.Fatalf("queue.yaml has %d queues, want the one gcpsetup makes", len(file.Queue))
	}
	q := file.Queue[0]
	seconds := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for _, c := range []struct {
		what      string
		yaml, api any
	}{
		{"name", q.Name, "sundial-tasks"},
		{"rate", q.Rate, fmt.Sprintf("%g/s", gcpsetup.Rate)},
		{"max_concurrent_requests", q.MaxConcurrentRequests, int32(gcpsetup.MaxConcurrent)},
		{"min_backoff_seconds", seconds(q.Retry.MinBackoffSeconds), gcpsetup.MinBackoff},
		{"max_doublings", q.Retry.MaxDoublings, int32(gcpsetup.MaxDoublings)},
		{"max_backoff_seconds", seconds(q.Retry.MaxBackoffSeconds), gcpsetup.MaxBackoff},
		{"task_age_limit", q.Retry.TaskAgeLimit, fmt.Sprintf("%dd", gcpsetup.MaxRetryDuration/(24*time.Hour))},
	} {
		if c.yaml != c.api {
			t.Errorf("queue.yaml %s is %v, gcpsetup says %v", c.what, c.yaml, c.api)
		}
	}
}
