package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/client"
)

// followFlags are logs' -f and its polling interval.
type followFlags struct {
	on    bool
	every time.Duration
}

// cliInvocation is an invocation with its log, as logs reads it.
type cliInvocation struct {
	JobID      string `json:"job_id"`
	ID         string
	Status     string
	Message    string
	Reason     string
	Log        string
	LogWritten int `json:"log_written"`
	LogTail    int `json:"log_tail"`
}

// printLog prints an invocation's log, or, raw, the API's JSON of it.
func printLog(ctx context.Context, c *client.Client, path string, raw bool, stdout io.Writer) error {
	var v cliInvocation
	return call(ctx, c, "GET", path, nil, raw, stdout, &v, func() {
		fmt.Fprint(stdout, v.Log)
		if v.Log != "" && !strings.HasSuffix(v.Log, "\n") {
			fmt.Fprintln(stdout)
		}
	})
}

// follower follows an invocation's log for logs -f.
type follower struct {
	c *client.Client
	// timeout bounds each request; interval is how often it asks while
	// the server answers; patience how long it goes on asking one that
	// does not.
	timeout, interval, patience time.Duration
	now                         func() time.Time
	sleep                       func(time.Duration)
}

// follow prints an invocation's log as it grows, asking the server every
// interval, until the invocation ends; then a line on stderr says how,
// and the exit status too: 0 SUCCEEDED, ExitRunFailed FAILED or ABORTED,
// ExitUnchanged SKIPPED. The server's log keeps its head and tail and
// drops between them once it is long: what was dropped before it was
// printed is said as such.
//
// A follower outlives a server's restart or a proxy's bad minute: a
// request that failed on the way, or that the server answered 5xx, 408
// or 429, is asked again, less and less often (up to maxFollowBackoff
// apart), for patience; stderr says when the answers stop and when they
// come back. Any other refusal (a 404, a 403) ends the follow at once.
func (f follower) follow(path string, stdout, stderr io.Writer) (int, error) {
	printed := 0 // bytes of the log's whole stream printed so far
	var failingSince time.Time
	wait := f.interval
	for {
		ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
		var v cliInvocation
		err := f.c.Do(ctx, "GET", path, nil, &v)
		cancel()
		switch {
		case err != nil && !transient(err):
			return 0, err
		case err != nil && failingSince.IsZero():
			failingSince = f.now()
			fmt.Fprintf(stderr, "sundial logs: %v; asking again for up to %s\n", err, f.patience)
		case err != nil && f.now().Sub(failingSince) >= f.patience:
			return 0, err
		case err != nil:
			wait = min(2*wait, max(f.interval, maxFollowBackoff))
		case !failingSince.IsZero():
			failingSince, wait = time.Time{}, f.interval
			fmt.Fprintln(stderr, "sundial logs: the server answers again")
		}
		if err != nil {
			f.sleep(wait)
			continue
		}
		fmt.Fprint(stdout, newInLog(v, printed))
		printed = max(printed, v.LogWritten)
		if code, ended := endStatus(v.Status); ended {
			if printed > 0 && !strings.HasSuffix(v.Log, "\n") {
				fmt.Fprintln(stdout)
			}
			what := v.Status
			if v.Reason != "" {
				what += " (" + v.Reason + ")"
			}
			// A skip record's message repeats its reason.
			if v.Message != "" && (v.Reason == "" || !strings.Contains(v.Message, v.Reason)) {
				what += ": " + v.Message
			}
			fmt.Fprintf(stderr, "%s %s ended %s\n", v.JobID, v.ID, what)
			return code, nil
		}
		f.sleep(f.interval)
	}
}

// maxFollowBackoff is the longest a follower waits between two requests
// that failed.
const maxFollowBackoff = 30 * time.Second

// followPatience is how long a follower goes on asking a server that
// does not answer.
const followPatience = 5 * time.Minute

// transient reports whether a request that failed with err may succeed
// if asked again: it failed on the way (no answer, or no answer in time),
// or the server or a proxy before it said it could not answer now. An
// answer that is not the API's JSON is no server's bad minute.
func transient(err error) bool {
	var refused *client.Error
	var syntax *json.SyntaxError
	var mistyped *json.UnmarshalTypeError
	switch {
	case errors.As(err, &refused):
		s := refused.Status
		return s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests
	case errors.As(err, &syntax), errors.As(err, &mistyped):
		return false
	}
	return true
}

// endStatus is the exit status of an invocation that ended with status,
// and false for one that has not ended.
func endStatus(status string) (int, bool) {
	switch status {
	case "SUCCEEDED":
		return 0, true
	case "FAILED", "ABORTED":
		return ExitRunFailed, true
	case "SKIPPED":
		return ExitUnchanged, true
	}
	return 0, false
}

// newInLog is what an invocation's log holds that was written after the
// first printed bytes: the end of its tail, and a line saying how many
// bytes the server dropped before they could be read, if it did.
func newInLog(v cliInvocation, printed int) string {
	n := v.LogWritten - printed
	if n <= 0 || v.LogTail > len(v.Log) {
		return ""
	}
	if n <= v.LogTail {
		return v.Log[len(v.Log)-n:]
	}
	return fmt.Sprintf("[... %d bytes dropped by the server before they were read ...]\n", n-v.LogTail) + v.Log[len(v.Log)-v.LogTail:]
}
