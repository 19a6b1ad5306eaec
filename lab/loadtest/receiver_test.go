package loadtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/lab/loadtest/measure"
)

// The receiver counts each occurrence once, by its Sundial headers, within
// the measured minutes only, and reports repeats and headerless requests.
func TestReceiverReport(t *testing.T) {
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var now time.Time
	r := &Receiver{Now: func() time.Time { return now }}
	send := func(job string, scheduled time.Time, late time.Duration) {
		now = scheduled.Add(late)
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if job != "" {
			req.Header.Set("Sundial-Job-Id", job)
			req.Header.Set("Sundial-Scheduled-Time", scheduled.Format(time.RFC3339))
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			t.Fatalf("answered %d", w.Code)
		}
	}
	send("p/a", start.Add(-time.Minute), time.Second) // before the window
	send("p/a", start.Add(10*time.Second), 100*time.Millisecond)
	send("p/a", start.Add(70*time.Second), 300*time.Millisecond)
	send("p/b", start.Add(20*time.Second), 200*time.Millisecond)
	send("p/b", start.Add(20*time.Second), 5*time.Second) // a repeat
	send("p/b", start.Add(2*time.Minute), 0)              // after the window
	send("", start, 0)

	got := r.Report(2, start, 2)
	want := ServeReport{
		Jobs: 2, Minutes: 2, Expected: 4, Received: 3, Missing: 1,
		LaunchesPerSecond: 3.0 / 120,
		Lateness:          measure.Lateness{LatenessP50: 0.2, LatenessP90: 0.3, LatenessP99: 0.3, LatenessMax: 0.3},
		Duplicates:        1, Malformed: 1,
	}
	got.PeakRSSMiB = 0
	if got != want {
		t.Errorf("report\n got %+v\nwant %+v", got, want)
	}
	if got.OK() {
		t.Error("a report with missing and repeated occurrences is OK")
	}
}
