package cloudtasks_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/task/cloudtasks"
)

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,500}$`)

func TestTaskID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
	}{
		{"names that differ only in characters ids cannot hold get different ids", "proj/job/tick/1", "proj-job-tick-1"},
		{"names that differ only past the readable part get different ids", strings.Repeat("x", 600) + "/1", strings.Repeat("x", 600) + "/2"},
		{"names that differ in non-ASCII letters get different ids", "proj/jöb/tick/1", "proj/jüb/tick/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := cloudtasks.TaskID(tt.a), cloudtasks.TaskID(tt.b)
			for _, id := range []string{a, b} {
				if !validID.MatchString(id) {
					t.Errorf("TaskID = %q: not a valid Cloud Tasks task id", id)
				}
			}
			if a == b {
				t.Errorf("TaskID(%q) = TaskID(%q) = %q", tt.a, tt.b, a)
			}
		})
	}
}

func TestTaskIDIsStableAndReadable(t *testing.T) {
	t.Parallel()
	id := cloudtasks.TaskID("proj/job/tick/42")
	if id != cloudtasks.TaskID("proj/job/tick/42") {
		t.Fatal("TaskID differs between two calls with one name")
	}
	if !strings.HasSuffix(id, "_proj-job-tick-42") {
		t.Errorf("TaskID = %q, want it to end with the readable name", id)
	}
}

func FuzzTaskID(f *testing.F) {
	f.Add("proj/job/start/-7")
	f.Add(strings.Repeat("é/", 400))
	f.Fuzz(func(t *testing.T, name string) {
		if id := cloudtasks.TaskID(name); !validID.MatchString(id) {
			t.Errorf("TaskID(%q) = %q: not a valid Cloud Tasks task id", name, id)
		}
	})
}
