package pubsub_test

import (
	"encoding/json"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/pubsub"
)

func grants(t *testing.T, entries ...string) []pubsub.TopicGrant {
	t.Helper()
	var gs []pubsub.TopicGrant
	for _, e := range entries {
		g, err := pubsub.ParseTopicGrant(e)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	return gs
}

func topic(name string) json.RawMessage {
	return json.RawMessage(`{"topic": "` + name + `"}`)
}

// A project publishes only to the topics granted to it, by name or by a
// prefix that holds the whole Pub/Sub project; with no grants, none.
func TestCheckForAllowsOnlyGrantedTopics(t *testing.T) {
	t.Parallel()
	tgt := pubsub.New(pubsub.Options{Grants: grants(t, "billing=projects/acme/topics/invoices", "billing=projects/acme/topics/billing-*", "ops=projects/ops/topics/*")})
	for _, c := range []struct {
		project, topic string
		want           string // "": allowed
	}{
		{"billing", "projects/acme/topics/invoices", ""},
		{"billing", "projects/acme/topics/billing-daily", ""},
		{"ops", "projects/ops/topics/anything", ""},
		{"billing", "projects/acme/topics/invoices2", "project billing may not publish to projects/acme/topics/invoices2 (--pubsub-topics)"},
		{"billing", "projects/acme/topics/payroll", "project billing may not publish to projects/acme/topics/payroll (--pubsub-topics)"},
		{"billing", "projects/ops/topics/anything", "project billing may not publish to projects/ops/topics/anything (--pubsub-topics)"},
		{"ops", "projects/ops2/topics/anything", "project ops may not publish to projects/ops2/topics/anything (--pubsub-topics)"},
		{"web", "projects/acme/topics/invoices", "project web may not publish to projects/acme/topics/invoices (--pubsub-topics)"},
	} {
		field, err := tgt.CheckFor(c.project, topic(c.topic))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckFor(%s, %s) = %v; want nil", c.project, c.topic, err)
		case c.want != "" && (err == nil || err.Error() != c.want || field != "topic"):
			t.Errorf("CheckFor(%s, %s) = %q, %v; want topic, %q", c.project, c.topic, field, err, c.want)
		}
	}
	none := pubsub.New(pubsub.Options{})
	if _, err := none.CheckFor("billing", topic("projects/acme/topics/invoices")); err == nil {
		t.Error("CheckFor with no grants = nil; want a refusal")
	}
	anyTopic := pubsub.New(pubsub.Options{AnyTopic: true})
	if _, err := anyTopic.CheckFor("billing", topic("projects/acme/topics/invoices")); err != nil {
		t.Errorf("CheckFor with AnyTopic = %v; want nil", err)
	}
}

// A definition stored while its topic was granted is refused at launch once
// the grant is gone, before any client is made: no credentials, no
// emulator needed.
func TestLaunchRefusesTopicsNoLongerGranted(t *testing.T) {
	t.Parallel()
	tgt := pubsub.New(pubsub.Options{Grants: grants(t, "p=projects/acme/topics/invoices", "billing=projects/acme/topics/*")})
	res := tgt.Launch(t.Context(), request(topic("projects/acme/topics/payroll")))
	const want = "pubsub: project p may not publish to projects/acme/topics/payroll (--pubsub-topics)"
	if res.Status != targets.Failed || res.Message != want {
		t.Errorf("Launch = %d %q; want Failed %q", res.Status, res.Message, want)
	}
}

// A refused launch publishes nothing to a topic that exists.
func TestLaunchRefusedPublishesNothing(t *testing.T) {
	t.Parallel()
	s := newSubscription(t)
	tgt := pubsub.New(pubsub.Options{Grants: grants(t, "other="+s.topic)})
	if res := tgt.Launch(t.Context(), request(topic(s.topic))); res.Status != targets.Failed {
		t.Errorf("Launch = %d %q; want Failed", res.Status, res.Message)
	}
	if got := s.pull(t); len(got) != 0 {
		t.Errorf("the subscription got %d messages; want none", len(got))
	}
}
