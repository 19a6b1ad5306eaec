// Package pubsub is the target that publishes one message to a Cloud
// Pub/Sub topic. A launch succeeds when the server acknowledges the publish,
// and says the message id it was given; what subscribers do with the
// message is theirs to report.
//
// Every message carries attributes a subscriber can de-duplicate by, as
// url_fetch's headers:
//
//	Sundial-Invocation-Id   the idempotency key, "<project>/<job>/<invocation id>":
//	                        the same for every attempt of an occurrence
//	Sundial-Job-Id          "<project>/<job>"
//	Sundial-Scheduled-Time  the occurrence, RFC 3339 in UTC
//	Sundial-Attempt         1 for the first attempt, 2 for the first retry, ...
//
// A project's jobs publish only to the topics its operator granted it
// (Options.Grants, --pubsub-topics): the server's credentials may reach
// other teams' topics.
//
// Pub/Sub cannot say whether a publish whose answer was lost happened, so the
// target is no targets.Resolver: such a launch ends as launch outcome unknown
// unless the job is idempotent, and a subscriber that de-duplicates by
// Sundial-Invocation-Id makes it so.
package pubsub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/targets"
)

// Options configure the target.
type Options struct {
	// ClientOptions are passed to the Pub/Sub client after its defaults
	// (Google default credentials, Pub/Sub's endpoint, or the emulator that
	// PUBSUB_EMULATOR_HOST names).
	ClientOptions []option.ClientOption
	// Grants are the topics each project's jobs may publish to; a job of
	// a project publishes to no other topic. None means none.
	Grants []TopicGrant
	// AnyTopic lets every project's jobs publish to any topic: for
	// checking configs (sundial validate), never for a server.
	AnyTopic bool
}

// Target is the pubsub target. It is safe for concurrent use.
//
// It keeps one client for every project's topics: the topic's full name
// says its project, and a raw Publish call needs no per-project state (the
// batching publisher of the higher-level client, which would, is of no use
// for one message an invocation).
type Target struct {
	opts     []option.ClientOption
	grants   []TopicGrant
	anyTopic bool

	mu sync.Mutex
	// c is made at the first launch, not by New: a server that runs no
	// pubsub job, and sundial validate, need no credentials.
	c *vkit.TopicAdminClient
}

// New returns the target.
func New(opts Options) *Target {
	return &Target{opts: opts.ClientOptions, grants: slices.Clone(opts.Grants), anyTopic: opts.AnyTopic}
}

// Check implements targets.Checker.
func (t *Target) Check(spec json.RawMessage) error {
	_, err := parseSpec(spec)
	return err
}

// Close closes the client, if one was made.
func (t *Target) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c == nil {
		return nil
	}
	err := t.c.Close()
	t.c = nil
	return err
}

// client returns the client, making it if this is the first launch that
// needs one. A client that could not be made is tried again next time.
func (t *Target) client(ctx context.Context) (*vkit.TopicAdminClient, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c != nil {
		return t.c, nil
	}
	// The client outlives this launch: its credentials must not stop
	// refreshing when the launch's context ends.
	c, err := vkit.NewTopicAdminClient(context.WithoutCancel(ctx), t.opts...)
	if err != nil {
		return nil, err
	}
	t.c = c
	return c, nil
}

// RunsWithinCall says that the publish is the attempt, ended once the
// server acknowledges it (targets.Synchronous).
func (*Target) RunsWithinCall() {}

// Launch implements targets.Target: it publishes the spec's message and
// returns Succeeded once the server has acknowledged it.
func (t *Target) Launch(ctx context.Context, req targets.Request) targets.Result {
	spec, err := parseSpec(req.Spec)
	if err != nil {
		return failed(err.Error())
	}
	// A definition stored before the grants changed is refused here, as
	// it would now be at load.
	project := jobid.Split(req.JobID).Project
	if err := t.mayPublish(project, spec.Topic); err != nil {
		return failed("pubsub: " + err.Error())
	}
	if ctx.Err() != nil {
		return failed(fmt.Sprintf("pubsub: not published to %s: %v", spec.Topic, context.Cause(ctx)))
	}
	c, err := t.client(ctx)
	if err != nil {
		return failed(fmt.Sprintf("pubsub: no Pub/Sub client: %s", oneLine(err.Error())))
	}
	attrs := make(map[string]string, len(spec.Attributes)+4)
	for k, v := range spec.Attributes {
		attrs[k] = v
	}
	attrs["Sundial-Invocation-Id"] = req.Key
	attrs["Sundial-Job-Id"] = req.JobID
	attrs["Sundial-Scheduled-Time"] = req.Occurrence.UTC().Format(time.RFC3339)
	attrs["Sundial-Attempt"] = strconv.Itoa(req.Attempt)
	resp, err := c.Publish(ctx, &pubsubpb.PublishRequest{
		Topic: spec.Topic,
		Messages: []*pubsubpb.PubsubMessage{{
			Data:        []byte(spec.Data),
			Attributes:  attrs,
			OrderingKey: spec.OrderingKey,
		}},
	})
	switch {
	case ctx.Err() != nil:
		// The client retries until the context ends; its last error is
		// less telling than why the context ended.
		return failed(fmt.Sprintf("pubsub: publishing to %s: %v", spec.Topic, context.Cause(ctx)))
	case status.Code(err) == codes.NotFound:
		return failed(fmt.Sprintf("pubsub: topic %s does not exist", spec.Topic))
	case err != nil:
		return failed(fmt.Sprintf("pubsub: publishing to %s: %s", spec.Topic, oneLine(err.Error())))
	case len(resp.GetMessageIds()) != 1:
		return failed(fmt.Sprintf("pubsub: publishing to %s: the server answered %d message ids for one message", spec.Topic, len(resp.GetMessageIds())))
	}
	return targets.Result{Status: targets.Succeeded, Message: fmt.Sprintf("published message %s to %s", oneLine(resp.MessageIds[0]), spec.Topic)}
}

func failed(msg string) targets.Result {
	return targets.Result{Status: targets.Failed, Message: msg}
}

// oneLine keeps a server's words to the one line a Result.Message is.
func oneLine(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}
