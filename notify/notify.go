// Package notify delivers the notifications jobs' notify: ask for: a JSON
// POST to a webhook, in a generic, a Slack-compatible or a
// Google-Chat-compatible body, rate limited per job, per project and in
// all. It is the engine's Notifier; the engine decides what to send and
// records it.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sundial-cron/sundial/engine"
)

// The formats of a webhook's body.
const (
	// FormatGeneric is every field of the notice, and a text line.
	FormatGeneric = "generic"
	// FormatSlack is Slack's incoming-webhook body: {"text": ...}.
	FormatSlack = "slack"
	// FormatGoogleChat is Google Chat's incoming-webhook body: {"text": ...}.
	FormatGoogleChat = "google_chat"
)

// Formats lists the formats a job's notify may name.
var Formats = []string{FormatGeneric, FormatSlack, FormatGoogleChat}

// Defaults of Options.
const (
	DefaultPerJob     = 10 // notifications a job may send in an hour
	DefaultPerProject = 20 // notifications a project may send in a minute
	DefaultTotal      = 60 // notifications all projects may send in a minute
	DefaultTimeout    = 10 * time.Second
)

// Options configure a Webhooks.
type Options struct {
	// Client makes the requests: urlfetch.NewClient's, so a webhook
	// reaches only what a url_fetch job may. Required.
	Client *http.Client
	// Check, if set, judges a webhook's destination before any rate
	// budget is spent on it (urlfetch.Checker's Check, with the Client's
	// egress): a destination the egress refuses costs no one's budget.
	// The Client's dial judges every address again.
	Check func(webhook string) error
	// Now is the clock. Required.
	Now func() time.Time
	// PerJob bounds one job's notifications in an hour, PerProject one
	// project's in a minute and Total all projects' in a minute (see
	// budget); 0 takes the default. A flapping job, a project failing
	// every job at once, or an incident failing every project cannot
	// flood a channel or the server's egress.
	PerJob, PerProject, Total int
	// Timeout bounds one delivery; 0 takes DefaultTimeout.
	Timeout time.Duration
	// Counted, if set, is told each notification's result: Delivered,
	// Failed or RateLimited (metrics).
	Counted func(result string)
}

// The results Options.Counted is told.
const (
	Delivered   = "delivered"
	Failed      = "failed"
	RateLimited = "rate_limited"
)

// Results lists every result, for metrics to start at 0.
var Results = []string{Delivered, Failed, RateLimited}

// Webhooks is the engine's Notifier over webhooks. It is safe for
// concurrent use.
type Webhooks struct {
	opts   Options
	budget *budget
}

// New returns a Webhooks with opts.
func New(opts Options) *Webhooks {
	if opts.PerJob <= 0 {
		opts.PerJob = DefaultPerJob
	}
	if opts.PerProject <= 0 {
		opts.PerProject = DefaultPerProject
	}
	if opts.Total <= 0 {
		opts.Total = DefaultTotal
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Webhooks{opts: opts, budget: newBudget(opts.PerJob, opts.PerProject, opts.Total)}
}

// Notify posts the notice to its webhook, unless its destination is
// refused or a rate limit stops it, in that order: the check costs
// nothing, and a notice that could not be sent anyway must not spend a
// budget another job or project needs. It returns what happened, for the
// invocation's log; its error names the webhook's host, never its path
// or query.
func (w *Webhooks) Notify(ctx context.Context, n engine.Notice) (string, error) {
	if w.opts.Check != nil {
		if err := w.opts.Check(n.Notify.URL); err != nil {
			w.count(Failed)
			return "", err
		}
	}
	if err := w.budget.take(n.JobID, w.opts.Now()); err != nil {
		w.count(RateLimited)
		return "", err
	}
	outcome, err := w.post(ctx, n)
	if err != nil {
		w.count(Failed)
		return "", err
	}
	w.count(Delivered)
	return outcome, nil
}

func (w *Webhooks) count(result string) {
	if w.opts.Counted != nil {
		w.opts.Counted(result)
	}
}

// post makes the request.
func (w *Webhooks) post(ctx context.Context, n engine.Notice) (string, error) {
	body, err := Body(n)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(n.Notify.URL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the webhook is not an http(s)://HOST/... URL")
	}
	ctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", n.Notify.URL, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("the webhook is not an http(s)://HOST/... URL")
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Sundial-Notification-Key", n.Key)
	resp, err := w.opts.Client.Do(req)
	if err != nil {
		return "", failure(err, u, w.opts.Timeout)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("the webhook answered HTTP %d", resp.StatusCode)
	}
	return fmt.Sprintf("delivered (HTTP %d)", resp.StatusCode), nil
}

// sinceOf is a long run's launch, for the generic body; nil otherwise.
func sinceOf(n engine.Notice) *time.Time {
	if n.Since.IsZero() {
		return nil
	}
	t := n.Since.UTC()
	return &t
}

// Text is the notice in one line, as people read it.
func Text(n engine.Notice) string {
	switch n.Event {
	case engine.NotifyFailure:
		msg := ""
		if n.Message != "" {
			msg = ": " + n.Message
		}
		return fmt.Sprintf("Sundial job %s failed (invocation %s)%s", n.JobID, n.Invocation, msg)
	case engine.NotifyRecovery:
		return fmt.Sprintf("Sundial job %s recovered: invocation %s succeeded after %d failed in a row", n.JobID, n.Invocation, n.Failures)
	case engine.NotifyLongRun:
		return fmt.Sprintf("Sundial job %s: invocation %s (attempt %d) has been running for %s", n.JobID, n.Invocation, n.Attempt, n.At.Sub(n.Since).Round(time.Second))
	}
	return fmt.Sprintf("Sundial job %s: %s (invocation %s)", n.JobID, n.Event, n.Invocation)
}

// Body is the JSON a notice is posted as, in its notify's format.
func Body(n engine.Notice) ([]byte, error) {
	switch n.Notify.Format {
	case FormatSlack, FormatGoogleChat:
		// Both take a plain "text" field for a simple message.
		return json.Marshal(map[string]string{"text": Text(n)})
	case "", FormatGeneric:
		return json.Marshal(struct {
			Key        string     `json:"key"`
			Job        string     `json:"job"`
			Invocation string     `json:"invocation"`
			Event      string     `json:"event"`
			Status     string     `json:"status"`
			Message    string     `json:"message,omitempty"`
			Failures   int        `json:"failures"`
			Attempt    int        `json:"attempt,omitempty"`
			Since      *time.Time `json:"since,omitempty"`
			At         time.Time  `json:"at"`
			Text       string     `json:"text"`
		}{n.Key, n.JobID, n.Invocation, n.Event, string(n.Status), n.Message, n.Failures, n.Attempt, sinceOf(n), n.At.UTC(), Text(n)})
	}
	return nil, fmt.Errorf("format %q: want one of %v", n.Notify.Format, Formats)
}
