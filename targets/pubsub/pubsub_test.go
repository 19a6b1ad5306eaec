package pubsub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/pubsub"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// project is the Pub/Sub project of every topic the tests make.
const project = "sundial-test"

// granted lets project p, the project of every request the tests make,
// publish to the tests' topics.
var granted = []pubsub.TopicGrant{
	{Project: "p", Topic: "projects/" + project + "/topics/", Prefix: true},
	{Project: "p", Topic: "projects/" + hangProject + "/topics/", Prefix: true},
}

var names atomic.Int64

// name returns a name no other test uses.
func name(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, names.Add(1))
}

// emulatorClients returns admin clients of the emulator, starting it if
// need be (or skipping t without one).
func emulatorClients(t *testing.T) (*vkit.TopicAdminClient, *vkit.SubscriptionAdminClient) {
	t.Helper()
	emulatortest.PubSub(t)
	topics, err := vkit.NewTopicAdminClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topics.Close() })
	subs, err := vkit.NewSubscriptionAdminClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { subs.Close() })
	return topics, subs
}

// subscription is a topic on the emulator with one subscription, which
// delivers in order of ordering key.
type subscription struct {
	topic, name string
	subs        *vkit.SubscriptionAdminClient
}

func newSubscription(t *testing.T) *subscription {
	t.Helper()
	topics, subs := emulatorClients(t)
	s := &subscription{
		topic: "projects/" + project + "/topics/" + name("topic"),
		name:  "projects/" + project + "/subscriptions/" + name("sub"),
		subs:  subs,
	}
	if _, err := topics.CreateTopic(t.Context(), &pubsubpb.Topic{Name: s.topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := subs.CreateSubscription(t.Context(), &pubsubpb.Subscription{Name: s.name, Topic: s.topic, EnableMessageOrdering: true}); err != nil {
		t.Fatal(err)
	}
	return s
}

// pull returns the messages waiting, acknowledged, without waiting for
// more.
func (s *subscription) pull(t *testing.T) []*pubsubpb.PubsubMessage {
	t.Helper()
	var got []*pubsubpb.PubsubMessage
	for {
		resp, err := s.subs.Pull(t.Context(), &pubsubpb.PullRequest{Subscription: s.name, MaxMessages: 100, ReturnImmediately: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ReceivedMessages) == 0 {
			return got
		}
		var ids []string
		for _, m := range resp.ReceivedMessages {
			got = append(got, m.Message)
			ids = append(ids, m.AckId)
		}
		if err := s.subs.Acknowledge(t.Context(), &pubsubpb.AcknowledgeRequest{Subscription: s.name, AckIds: ids}); err != nil {
			t.Fatal(err)
		}
	}
}

func specFor(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var occurrence = time.Date(2026, 3, 8, 2, 30, 0, 0, time.FixedZone("EST", -5*3600))

func request(spec json.RawMessage) targets.Request {
	return targets.Request{
		Key: "p/job/inv-1", JobID: "p/job", Invocation: "inv-1",
		Occurrence: occurrence, Attempt: 2, Spec: spec,
	}
}

// A launch publishes the spec's data, attributes and ordering key, with the
// Sundial-* attributes, and succeeds saying the id the server gave it.
func TestPublishReachesTheSubscription(t *testing.T) {
	t.Parallel()
	s := newSubscription(t)
	spec := specFor(t, map[string]any{
		"topic":        s.topic,
		"data":         "run the report\n",
		"attributes":   map[string]string{"report": "daily", "Region": "eu"},
		"ordering_key": "reports",
	})
	res := pubsub.New(pubsub.Options{Grants: granted}).Launch(t.Context(), request(spec))
	if res.Status != targets.Succeeded {
		t.Fatalf("Launch = %d %q; want Succeeded", res.Status, res.Message)
	}
	got := s.pull(t)
	if len(got) != 1 {
		t.Fatalf("the subscription got %d messages; want 1", len(got))
	}
	m := got[0]
	if want := fmt.Sprintf("published message %s to %s", m.MessageId, s.topic); res.Message != want {
		t.Errorf("Message = %q; want %q", res.Message, want)
	}
	if string(m.Data) != "run the report\n" {
		t.Errorf("data = %q; want %q", m.Data, "run the report\n")
	}
	if m.OrderingKey != "reports" {
		t.Errorf("ordering key = %q; want %q", m.OrderingKey, "reports")
	}
	want := map[string]string{
		"report":                 "daily",
		"Region":                 "eu",
		"Sundial-Invocation-Id":  "p/job/inv-1",
		"Sundial-Job-Id":         "p/job",
		"Sundial-Scheduled-Time": "2026-03-08T07:30:00Z",
		"Sundial-Attempt":        "2",
	}
	if len(m.Attributes) != len(want) {
		t.Errorf("attributes = %v; want %v", m.Attributes, want)
	}
	for k, v := range want {
		if m.Attributes[k] != v {
			t.Errorf("attribute %s = %q; want %q", k, m.Attributes[k], v)
		}
	}
}

// A topic that does not exist fails the launch, saying so.
func TestMissingTopicFails(t *testing.T) {
	t.Parallel()
	emulatorClients(t)
	topic := "projects/" + project + "/topics/" + name("never-made")
	res := pubsub.New(pubsub.Options{Grants: granted}).Launch(t.Context(), request(specFor(t, map[string]any{"topic": topic})))
	if want := "pubsub: topic " + topic + " does not exist"; res.Status != targets.Failed || res.Message != want {
		t.Errorf("Launch = %d %q; want Failed %q", res.Status, res.Message, want)
	}
}

// A launch whose deadline has passed fails saying so, and publishes
// nothing.
func TestExpiredContextPublishesNothing(t *testing.T) {
	t.Parallel()
	s := newSubscription(t)
	ctx, cancel := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel()
	res := pubsub.New(pubsub.Options{Grants: granted}).Launch(ctx, request(specFor(t, map[string]any{"topic": s.topic})))
	if res.Status != targets.Failed || !strings.Contains(res.Message, context.DeadlineExceeded.Error()) {
		t.Errorf("Launch = %d %q; want Failed, saying the deadline passed", res.Status, res.Message)
	}
	if got := s.pull(t); len(got) != 0 {
		t.Errorf("the subscription got %d messages; want none", len(got))
	}
}

// A bad spec is refused before any client is made: no credentials, no
// emulator needed.
func TestBadSpecNamesTheField(t *testing.T) {
	t.Parallel()
	tgt := pubsub.New(pubsub.Options{Grants: granted})
	spec := json.RawMessage(`{"topic": "projects/p/topics/reports", "attributes": {"Sundial-Attempt": "9"}}`)
	const want = `pubsub: attribute "Sundial-Attempt": the Sundial-* attributes are set by Sundial`
	if err := tgt.Check(spec); err == nil || err.Error() != want {
		t.Errorf("Check = %v; want %q", err, want)
	}
	if res := tgt.Launch(t.Context(), request(spec)); res.Status != targets.Failed || res.Message != want {
		t.Errorf("Launch = %d %q; want Failed %q", res.Status, res.Message, want)
	}
}
