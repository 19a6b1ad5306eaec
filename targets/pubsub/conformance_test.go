package pubsub_test

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sundial-cron/sundial/internal/emulator/emulatortest"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/pubsub"
	"github.com/sundial-cron/sundial/targets/targettest"
)

// hangProject is the project of the topics whose publishes the forwarder
// holds until the client gives up.
const hangProject = "hang"

// forwarder is a gRPC server in front of the emulator: it passes every
// publish on to it, except those to hangProject's topics, which it holds
// until the client goes away. No Pub/Sub, the emulator included, can be
// made to hold a publish; the conformance suite needs one to show that a
// launch ends with its context.
type forwarder struct {
	pubsubpb.UnimplementedPublisherServer
	emulator *vkit.TopicAdminClient
	addr     string

	mu      sync.Mutex
	started map[string]chan struct{} // by hanging topic, closed when its publish arrives
}

var (
	forwarderOnce sync.Once
	theForwarder  *forwarder
)

// forwarderFor returns the forwarder, starting it and the emulator the
// first time it is asked.
func forwarderFor(t *testing.T) *forwarder {
	t.Helper()
	emulatortest.PubSub(t)
	forwarderOnce.Do(func() {
		// The client and the server last as long as the test binary: every
		// conformance subtest shares them.
		emu, err := vkit.NewTopicAdminClient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f := &forwarder{emulator: emu, addr: l.Addr().String(), started: map[string]chan struct{}{}}
		srv := grpc.NewServer()
		pubsubpb.RegisterPublisherServer(srv, f)
		go srv.Serve(l)
		theForwarder = f
	})
	if theForwarder == nil {
		t.Fatal("the forwarder did not start")
	}
	return theForwarder
}

func (f *forwarder) Publish(ctx context.Context, req *pubsubpb.PublishRequest) (*pubsubpb.PublishResponse, error) {
	if strings.HasPrefix(req.Topic, "projects/"+hangProject+"/") {
		f.mu.Lock()
		started := f.started[req.Topic]
		delete(f.started, req.Topic) // a retry signals nothing more
		f.mu.Unlock()
		if started != nil {
			close(started)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return f.emulator.Publish(ctx, req)
}

// hang returns a spec whose publish the forwarder holds, and a channel
// closed when it arrives.
func (f *forwarder) hang() (json.RawMessage, <-chan struct{}) {
	topic := "projects/" + hangProject + "/topics/" + name("hang")
	started := make(chan struct{})
	f.mu.Lock()
	f.started[topic] = started
	f.mu.Unlock()
	return json.RawMessage(`{"topic": "` + topic + `"}`), started
}

// newTarget returns a target that publishes through the forwarder.
func newTarget(t *testing.T) targets.Target {
	f := forwarderFor(t)
	tgt := pubsub.New(pubsub.Options{Grants: granted, ClientOptions: []option.ClientOption{
		option.WithEndpoint(f.addr),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithoutAuthentication(),
	}})
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

func topicSpec(topic string) json.RawMessage {
	return json.RawMessage(`{"topic": "` + topic + `", "data": "hello"}`)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	targettest.Run(t, targettest.Harness{
		New: newTarget,
		Succeeding: func(t *testing.T) json.RawMessage {
			return topicSpec(newSubscription(t).topic)
		},
		Launched: targets.Succeeded,
		// The server's failure: the topic does not exist.
		Failing: func(t *testing.T) json.RawMessage {
			return topicSpec("projects/" + project + "/topics/" + name("never-made"))
		},
		Hang: func(t *testing.T) (json.RawMessage, <-chan struct{}) {
			return forwarderFor(t).hang()
		},
		// The key travels in the Sundial-Invocation-Id attribute.
		Witness: func(t *testing.T) (json.RawMessage, func() []string) {
			s := newSubscription(t)
			var mu sync.Mutex
			var keys []string
			return topicSpec(s.topic), func() []string {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range s.pull(t) {
					keys = append(keys, m.Attributes["Sundial-Invocation-Id"])
				}
				return slices.Clone(keys)
			}
		},
		// The message id is in Message; there is no output to keep.
		LogLimit: 0,
		BadSpecs: []targettest.BadSpec{
			{Spec: ``, Field: "pubsub: bad spec"},
			{Spec: `{}`, Field: "topic is missing"},
			{Spec: `{"topic": "reports"}`, Field: `bad topic "reports": want projects/<project>/topics/<topic>`},
			{Spec: `{"topic": "projects/p/subscriptions/reports"}`, Field: "want projects/<project>/topics/<topic>"},
			{Spec: `{"topic": "projects/P!/topics/reports"}`, Field: `bad project id "P!"`},
			{Spec: `{"topic": "projects/p/topics/ab"}`, Field: "the topic id must be 3 to 255 characters"},
			{Spec: `{"topic": "projects/p/topics/1reports"}`, Field: "the topic id must start with a letter"},
			{Spec: `{"topic": "projects/p/topics/google-reports"}`, Field: "topic ids starting with goog are reserved"},
			{Spec: `{"topic": "projects/p/topics/re ports"}`, Field: `the topic id holds ' '`},
			{Spec: `{"topic": "projects/p/topics/re\nports"}`, Field: `bad topic "projects/p/topics/re\nports"`},
			{Spec: `{"topic": "projects/p/topics/reports", "data": 5}`, Field: "Spec.data"},
			{Spec: `{"topic": "projects/p/topics/reports", "attributes": {"a": 1}}`, Field: "Spec.attributes"},
			{Spec: `{"topic": "projects/p/topics/reports", "attributes": {"": "1"}}`, Field: "an attribute name is empty"},
			{Spec: `{"topic": "projects/p/topics/reports", "attributes": {"sundial-job-id": "x"}}`, Field: `attribute "sundial-job-id": the Sundial-* attributes are set by Sundial`},
			{Spec: `{"topic": "projects/p/topics/reports", "attributes": {"googclient_x": "1"}}`, Field: `attribute "googclient_x": names starting with goog are reserved`},
			{Spec: `{"topic": "projects/p/topics/reports", "attributes": {"a": "` + strings.Repeat("v", 1025) + `"}}`, Field: `attribute "a": the value is longer than 1024 bytes`},
			{Spec: `{"topic": "projects/p/topics/reports", "ordering_key": "` + strings.Repeat("k", 1025) + `"}`, Field: "ordering_key is longer than 1024 bytes"},
			{Spec: `{"topic": "projects/p/topics/reports", "orderingKey": "k"}`, Field: `unknown field "orderingKey"`},
			{Spec: `{"topic": "projects/p/topics/reports"} {}`, Field: "more than one JSON value"},
		},
		// Line breaks where the server's error could quote them: the
		// topic does not exist.
		LineBreaks: []json.RawMessage{
			json.RawMessage(`{"topic": "projects/` + project + `/topics/never-made", "data": "a\nb", "attributes": {"a\nb": "c\r\nd"}, "ordering_key": "e\nf"}`),
		},
	})
}
