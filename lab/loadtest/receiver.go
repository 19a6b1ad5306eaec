package loadtest

import (
	"net/http"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/lab/loadtest/measure"
)

// Receiver is the url_fetch destination of a load test of the whole
// server: it notes when each occurrence arrived, by the headers every
// url_fetch request carries, so lateness is measured where a job's owner
// would see it: scheduled time to request received, HTTP included.
type Receiver struct {
	// Now is the clock. Required.
	Now func() time.Time

	mu         sync.Mutex
	arrived    map[occurrence]time.Time
	duplicates int
	malformed  int
}

// occurrence is one job's one scheduled time.
type occurrence struct {
	job       string
	scheduled time.Time
}

// ServeHTTP notes a request and answers 204.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := r.Now()
	sched, err := time.Parse(time.RFC3339, req.Header.Get("Sundial-Scheduled-Time"))
	job := req.Header.Get("Sundial-Job-Id")
	r.mu.Lock()
	switch o := (occurrence{job, sched}); {
	case err != nil || job == "":
		r.malformed++
	case !r.arrived[o].IsZero():
		r.duplicates++
	default:
		if r.arrived == nil {
			r.arrived = map[occurrence]time.Time{}
		}
		r.arrived[o] = at
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// ServeReport is what a Receiver saw of the occurrences scheduled in the
// measured minutes.
type ServeReport struct {
	Jobs    int `json:"jobs"`
	Minutes int `json:"minutes"`
	// Expected is Jobs × Minutes: each job fires once a minute. Received
	// are the distinct occurrences that arrived; Missing the rest.
	Expected          int     `json:"expected"`
	Received          int     `json:"received"`
	Missing           int     `json:"missing"`
	LaunchesPerSecond float64 `json:"launches_per_s"`
	// Lateness is arrival at the receiver minus scheduled time.
	measure.Lateness
	// Duplicates are requests for an occurrence that had already arrived,
	// over the whole run: double launches, as a receiver sees them.
	Duplicates int `json:"duplicates"`
	// Malformed are requests without the Sundial headers.
	Malformed  int     `json:"malformed"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
}

// OK reports whether every expected occurrence arrived, once.
func (r ServeReport) OK() bool {
	return r.Missing == 0 && r.Duplicates == 0 && r.Malformed == 0
}

// Report counts the occurrences scheduled in [start, start+minutes) of
// jobs jobs, each firing once a minute.
func (r *Receiver) Report(jobs int, start time.Time, minutes int) ServeReport {
	end := start.Add(time.Duration(minutes) * time.Minute)
	r.mu.Lock()
	var late []time.Duration
	for o, at := range r.arrived {
		if !o.scheduled.Before(start) && o.scheduled.Before(end) {
			late = append(late, at.Sub(o.scheduled))
		}
	}
	rep := ServeReport{
		Jobs:       jobs,
		Minutes:    minutes,
		Expected:   jobs * minutes,
		Received:   len(late),
		Duplicates: r.duplicates,
		Malformed:  r.malformed,
		PeakRSSMiB: float64(peakRSS()) / (1 << 20),
	}
	r.mu.Unlock()
	rep.Missing = rep.Expected - rep.Received
	rep.LaunchesPerSecond = float64(rep.Received) / end.Sub(start).Seconds()
	rep.Lateness = measure.LatenessOf(late)
	return rep
}
