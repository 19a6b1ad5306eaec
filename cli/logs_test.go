package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/client"
)

// A follower prints each byte of the log's stream once: the new end of
// the log while nothing was dropped, the new end of its tail once the
// server drops its middle, and, when more was written between two reads
// than the tail holds, how much it never saw.
func TestNewInLogPrintsEachByteOnce(t *testing.T) {
	const marker = "\n[... 10 bytes dropped ...]\n"
	for _, tc := range []struct {
		name    string
		v       cliInvocation
		printed int
		want    string
	}{
		{"the first read", cliInvocation{Log: "ab\n", LogWritten: 3, LogTail: 3}, 0, "ab\n"},
		{"a read with more", cliInvocation{Log: "ab\ncd\n", LogWritten: 6, LogTail: 6}, 3, "cd\n"},
		{"a read with nothing new", cliInvocation{Log: "ab\ncd\n", LogWritten: 6, LogTail: 6}, 6, ""},
		{"the middle dropped, the new bytes in the tail", cliInvocation{Log: "head" + marker + "tail", LogWritten: 18, LogTail: 4}, 16, "il"},
		{"more written than the tail holds", cliInvocation{Log: "head" + marker + "tail", LogWritten: 18, LogTail: 4}, 6, "[... 8 bytes dropped by the server before they were read ...]\ntail"},
		{"an answer that does not add up", cliInvocation{Log: "ab", LogWritten: 9, LogTail: 5}, 0, ""},
	} {
		if got := newInLog(tc.v, tc.printed); got != tc.want {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
}

// followServer answers a follower's requests from script in turn, one
// answer each: "drop" closes the connection unanswered, a number is that
// status with an API error, anything else is an invocation's JSON. Past
// the script it repeats the last answer.
func followServer(t *testing.T, script ...string) (*client.Client, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := script[min(int(asked.Add(1)), len(script))-1]
		if answer == "drop" {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		if status, err := strconv.Atoi(answer); err == nil {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error": "scripted %d"}`, status)
			return
		}
		fmt.Fprint(w, answer)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return c, &asked
}

// fakeFollower follows through c on a clock of its own, which its
// sleeps move: no test waits on the wall clock.
func fakeFollower(c *client.Client, patience time.Duration) follower {
	clock := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	return follower{c: c, timeout: time.Second, interval: time.Second, patience: patience,
		now: func() time.Time { return clock }, sleep: func(d time.Duration) { clock = clock.Add(d) }}
}

// TestAFollowerOutlivesTheServersBadMinute: logs -f asks again through
// answers a restarting server or a proxy gives (503, a dropped
// connection, 502, 429), prints the log once, says on stderr where the
// answers stopped and where they came back, and ends with the invocation.
func TestAFollowerOutlivesTheServersBadMinute(t *testing.T) {
	running := `{"job_id": "p/j", "id": "r1", "status": "RUNNING", "log": "a\n", "log_written": 2, "log_tail": 2}`
	done := `{"job_id": "p/j", "id": "r1", "status": "SUCCEEDED", "log": "a\nb\n", "log_written": 4, "log_tail": 4}`
	c, asked := followServer(t, "503", "drop", running, "502", "429", done)
	var stdout, stderr strings.Builder
	f := fakeFollower(c, time.Minute)
	code, err := f.follow("/api/v1/projects/p/jobs/j/invocations/r1", &stdout, &stderr)
	if err != nil || code != 0 {
		t.Fatalf("followLog = %d, %v; want 0, nil (stderr %q)", code, err, stderr.String())
	}
	if got := stdout.String(); got != "a\nb\n" {
		t.Errorf("printed %q, want each line of the log once", got)
	}
	// Two streaks of failures, each said where it begins and ends.
	want := "sundial logs: 503 Service Unavailable: scripted 503; asking again for up to 1m0s\n" +
		"sundial logs: the server answers again\n" +
		"sundial logs: 502 Bad Gateway: scripted 502; asking again for up to 1m0s\n" +
		"sundial logs: the server answers again\n" +
		"p/j r1 ended SUCCEEDED\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
	if n := asked.Load(); n != 6 {
		t.Errorf("%d requests, want 6", n)
	}
}

// TestAFollowerStopsAtARefusalOrAfterItsPatience: a 404 (or any refusal
// that asking again cannot change) ends the follow at the first answer;
// a server that keeps failing, once the follower's patience is spent,
// having asked less and less often: 1, 2, 4, ... 30 s apart.
func TestAFollowerStopsAtARefusalOrAfterItsPatience(t *testing.T) {
	for _, tc := range []struct {
		name     string
		script   []string
		patience time.Duration
		want     string
		requests int32
	}{
		{"a 404", []string{"404"}, time.Minute, "404 Not Found", 1},
		{"an answer not the API's JSON", []string{"<html>"}, time.Minute, "not the API's JSON", 1},
		// Asked at 0, then 1, 3, 7, 15, 31, 61 (past the patience) s.
		{"a server failing past patience", []string{"500"}, time.Minute, "500 Internal Server Error", 7},
		// Waits of 1, 2, 4, 8, 16, 30, 30, ...: asked at 0, 1, 3, 7, 15,
		// 31, 61, 91, 121, 151, 181.
		{"a server failing for longer", []string{"503"}, 3 * time.Minute, "503 Service Unavailable", 11},
	} {
		c, asked := followServer(t, tc.script...)
		var stdout, stderr strings.Builder
		f := fakeFollower(c, tc.patience)
		_, err := f.follow("/x", &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: follow = %v, want an error with %q", tc.name, err, tc.want)
		}
		if n := asked.Load(); n != tc.requests {
			t.Errorf("%s: %d requests, want %d", tc.name, n, tc.requests)
		}
	}
}
