package config_test

import (
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/pubsub"
)

// A project publishes only to the topics the operator granted it: a config
// naming another is refused at load, naming the file, line and field, and
// nothing of it is applied; topics granted by name or by prefix are
// accepted.
func TestParseRefusesPubsubTopicsNotGranted(t *testing.T) {
	t.Parallel()
	var grants []pubsub.TopicGrant
	for _, e := range []string{"billing=projects/acme/topics/invoices", "billing=projects/acme/topics/billing-*"} {
		g, err := pubsub.ParseTopicGrant(e)
		if err != nil {
			t.Fatal(err)
		}
		grants = append(grants, g)
	}
	targets := map[string]targets.Target{"pubsub": pubsub.New(pubsub.Options{Grants: grants})}
	job := func(topic string) string {
		return "jobs:\n  - id: export\n    schedule: \"@hourly\"\n    pubsub:\n      data: hi\n      topic: " + topic + "\n"
	}

	path, p, err := parseFile(t, "billing.yaml", job("projects/x/topics/exports"), targets)
	want := path + ":6: jobs[0].pubsub.topic: project billing may not publish to projects/x/topics/exports (--pubsub-topics)"
	if p != nil || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse(billing.yaml) = %v, %v; want no project and the error %q", p, err, want)
	}
	for _, topic := range []string{"projects/acme/topics/invoices", "projects/acme/topics/billing-daily"} {
		if _, p, err := parseFile(t, "billing.yaml", job(topic), targets); err != nil || len(p.Jobs) != 1 {
			t.Errorf("Parse(billing.yaml publishing to %s) = %v; want its job", topic, err)
		}
	}
	if _, p, err := parseFile(t, "web.yaml", job("projects/acme/topics/invoices"), targets); p != nil || err == nil || !strings.Contains(err.Error(), "project web may not publish") {
		t.Errorf("Parse(web.yaml) = %v, %v; want it refused", p, err)
	}
}
