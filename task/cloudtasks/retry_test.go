package cloudtasks_test

import (
	"testing"
	"time"

	"github.com/sundial-cron/sundial/task/cloudtasks"
)

func TestBackoffFollowsCloudTasksDocs(t *testing.T) {
	t.Parallel()
	r := cloudtasks.Retry{MinBackoff: 10 * time.Second, MaxBackoff: 300 * time.Second, MaxDoublings: 3}
	want := []time.Duration{10, 20, 40, 80, 160, 240, 300, 300}
	for i, w := range want {
		if got := r.Backoff(i + 1); got != w*time.Second {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w*time.Second)
		}
	}
}
